"""How far a plan's data copy is, and how long it takes at the cluster's throttle."""

from dataclasses import dataclass

from django.db.models import Count, Sum

from ..models import Execution, MoveState, Plan, PlanMove
from .snapshot import policy_or_default


@dataclass(frozen=True)
class PlanProgress:
    moves_total: int
    moves_by_state: dict[str, int]
    bytes_total: int
    bytes_done: int
    eta_seconds: float | None
    rate_bytes_per_sec: float | None
    batches: int
    cancel_requested: bool
    leaders_elected: bool
    throttle_applied: bool
    # Operator controls in effect (the run's own values, else the policy's).
    paused: bool = False
    throttle_bytes_per_sec: int = 0
    max_moves_per_broker: int = 0
    max_moves_cluster: int = 0

    @property
    def percent(self) -> float:
        if self.bytes_total:
            return 100.0 * self.bytes_done / self.bytes_total
        done = self.moves_by_state.get(MoveState.DONE, 0)
        return 100.0 * done / self.moves_total if self.moves_total else 100.0


def plan_progress(*, plan: Plan) -> PlanProgress:
    counts: dict[str, int] = {}
    bytes_total = bytes_done = 0
    # Summed by the database per state: a plan can hold 100k+ moves.
    for state, n, total, total_dirs, done in (
        PlanMove.objects.filter(plan=plan)
        .values_list("state")
        .annotate(Count("pk"), Sum("bytes"), Sum("bytes_dirs"), Sum("bytes_done"))
        .order_by("state")
    ):
        counts[state] = n
        bytes_total += (total or 0) + (total_dirs or 0)
        bytes_done += done or 0
    # One byte figure per plan: the estimate (logs plus the writes the copy takes
    # along), unless more was copied.
    bytes_total = max(bytes_total, plan.bytes_to_move, bytes_done)
    execution = getattr(plan, "execution", None)
    policy = policy_or_default(cluster=plan.cluster)
    return PlanProgress(
        moves_total=sum(counts.values()),
        moves_by_state=counts,
        bytes_total=bytes_total,
        bytes_done=bytes_done,
        eta_seconds=execution.eta_seconds if execution else None,
        rate_bytes_per_sec=execution.rate_bytes_per_sec if execution else None,
        batches=execution.batches if execution else 0,
        cancel_requested=execution.cancel_requested if execution else False,
        leaders_elected=execution.leaders_elected if execution else False,
        throttle_applied=execution.throttle_applied if execution else False,
        paused=execution.paused if execution else False,
        throttle_bytes_per_sec=_throttle_in_effect(plan=plan, execution=execution),
        max_moves_per_broker=(execution and execution.max_moves_per_broker)
        or policy.max_moves_per_broker,
        max_moves_cluster=(execution and execution.max_moves_cluster) or policy.max_moves_cluster,
    )


def _throttle_in_effect(*, plan: Plan, execution: Execution | None) -> int:
    if execution is not None and execution.throttle_rate is not None:
        return int(execution.throttle_rate)
    return int(policy_or_default(cluster=plan.cluster).throttle_bytes_per_sec)


def plan_eta_at_throttle(*, plan: Plan) -> float | None:
    """Seconds to copy the plan's bytes at its replication throttle (0: none)."""
    throttle = _throttle_in_effect(plan=plan, execution=getattr(plan, "execution", None))
    if not throttle:
        return None
    return plan.bytes_to_move / throttle
