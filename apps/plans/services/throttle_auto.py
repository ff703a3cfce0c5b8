"""The adaptive throttle (`throttle: auto`): a slow start, then additive increase
while clients feel nothing, multiplicative decrease when they do (AIMD, as TCP does).

The canary judges each round (`ThrottleVerdict`); each running execution with
`throttle_auto` then gets its `throttle_rate` raised up to its ceiling (what the
approver, else the policy, allows) — doubled until the objective first breaks, then by
THROTTLE_AUTO_STEP — or halved down to THROTTLE_AUTO_MIN after THROTTLE_AUTO_MISSES
rounds in a row outside it (at once when canary writes failed). The executor applies the
rate to Kafka at its next step (`executor/throttles.py` `throttles_retune`); here only
the row and its audit are written, so no transaction waits on Kafka.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from apps.clusters.models import Cluster

from ..actions import ExecutionAction
from ..models import Execution, PlanState
from ..selectors import under_replicated_outside_moves
from .actors import EXECUTOR
from .execution_control import execution_bounds
from .plan_audit import plan_audit_record
from .policy import policy_get

# A ceiling for a run approved without any throttle (0): the rate still adapts.
UNTHROTTLED_CEILING = 1_000_000_000


@dataclass(frozen=True)
class ThrottleVerdict:
    """One canary round's judgement: did every broker keep the client objective, and
    in a few words why not (or what held)."""

    met: bool
    reason: str
    # writes failed: back off at once, not after THROTTLE_AUTO_MISSES rounds
    urgent: bool = False


def rate_text(rate: int) -> str:
    return f"{rate / 1e6:.1f} MB/s"


def throttle_auto_ceiling(*, execution: Execution) -> int:
    ceiling = execution_bounds(plan=execution.plan, execution=execution)["throttle_rate"]
    return ceiling if ceiling > 0 else UNTHROTTLED_CEILING


def throttle_auto_next(*, rate: int, ceiling: int, met: bool, doubling: bool) -> int:
    """The next rate: up while the objective holds (double in the slow start, one step
    after it), half when it breaks."""
    if met:
        return min(ceiling, rate * 2 if doubling else rate + settings.THROTTLE_AUTO_STEP)
    return min(ceiling, max(settings.THROTTLE_AUTO_MIN, rate // 2))


def throttle_auto_begin(*, execution: Execution) -> None:
    """Start a run's adaptive throttle low if its cluster's policy asks for it; the
    throttle the approver chose (else the policy's) is its ceiling. Inside the
    executor's start transaction."""
    if execution.throttle_auto or not policy_get(cluster=execution.plan.cluster).throttle_auto:
        return
    ceiling = throttle_auto_ceiling(execution=execution)
    rate = min(ceiling, settings.THROTTLE_AUTO_START)
    execution.throttle_auto = True
    execution.throttle_rate = rate
    execution.throttle_auto_under_replicated = under_replicated_outside_moves(plan=execution.plan)
    execution.save(
        update_fields=[
            "throttle_auto",
            "throttle_rate",
            "throttle_auto_under_replicated",
            "updated_at",
        ]
    )
    plan_audit_record(
        actor=EXECUTOR,
        action=ExecutionAction.THROTTLE_ADAPTED,
        plan=execution.plan,
        after={"throttle_rate": rate, "ceiling": ceiling},
        reason=f"started at {rate_text(rate)} (auto, ceiling {rate_text(ceiling)})",
    )


def executions_throttle_adapt(*, cluster: Cluster, verdict: ThrottleVerdict) -> list[Execution]:
    """Step the adaptive throttle of every running execution of `cluster` that has one
    by one canary round's verdict; the executions whose rate changed.

    A round within the objective raises the rate. One outside it halves the rate when
    it is the THROTTLE_AUTO_MISSES-th in a row, or at once when writes failed: a
    single slow round is often one stalled request, and halving for it costs a plan
    minutes of copying at a fraction of what the cluster can take."""
    changed = []
    ids = Execution.objects.filter(
        plan__cluster=cluster, plan__state=PlanState.EXECUTING, throttle_auto=True, paused=False
    ).values_list("pk", flat=True)
    for pk in ids:
        with transaction.atomic():
            execution = (
                Execution.objects.select_for_update().select_related("plan").filter(pk=pk).first()
            )
            if execution is None or not execution.throttle_auto:
                continue
            if _adapt(execution=execution, verdict=verdict):
                changed.append(execution)
    return changed


def _replication_verdict(*, execution: Execution, verdict: ThrottleVerdict) -> ThrottleVerdict:
    """The canary's verdict, broken too when more partitions outside the plan are
    under-replicated than when the adaptive throttle started."""
    before = execution.throttle_auto_under_replicated
    if not verdict.met or before is None:
        return verdict
    now = under_replicated_outside_moves(plan=execution.plan)
    if now <= before:
        return verdict
    return ThrottleVerdict(
        met=False,
        reason=f"{now} partition(s) outside the plan under-replicated ({before} at its start)",
    )


def _adapt(*, execution: Execution, verdict: ThrottleVerdict) -> bool:
    verdict = _replication_verdict(execution=execution, verdict=verdict)
    ceiling = throttle_auto_ceiling(execution=execution)
    rate = int(execution.throttle_rate or settings.THROTTLE_AUTO_START)
    misses = 0 if verdict.met else execution.throttle_auto_misses + 1
    if verdict.met or verdict.urgent or misses >= settings.THROTTLE_AUTO_MISSES:
        new = throttle_auto_next(
            rate=rate, ceiling=ceiling, met=verdict.met, doubling=execution.throttle_auto_doubling
        )
        if not verdict.met:
            misses = 0
            execution.throttle_auto_doubling = False
    else:
        new = rate
    execution.throttle_auto_misses = misses
    execution.throttle_rate = new
    execution.save(
        update_fields=[
            "throttle_rate",
            "throttle_auto_doubling",
            "throttle_auto_misses",
            "updated_at",
        ]
    )
    if new == rate:
        return False
    word = "raised" if new > rate else "lowered"
    plan_audit_record(
        actor=EXECUTOR,
        action=ExecutionAction.THROTTLE_ADAPTED,
        plan=execution.plan,
        before={"throttle_rate": rate},
        after={"throttle_rate": new, "ceiling": ceiling},
        reason=f"{word} to {rate_text(new)}: {verdict.reason}",
    )
    return True
