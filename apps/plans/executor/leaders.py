"""Leader elections of an execution: the preferred leaders once every move is done,
and, for partitions whose data loss was confirmed, an unclean leader among the new
replicas."""

from ..actions import ExecutionAction
from ..kafka_ops import KafkaOps, PartitionInfo, PartitionKey
from ..models import Execution, MoveState, Plan, PlanMove
from ..services.actors import EXECUTOR
from ..services.plan_audit import plan_audit_record

MAX_ELECTION_ATTEMPTS = 15


def preferred_leaders_elect(
    *, plan: Plan, execution: Execution, moves: list[PlanMove], kafka: KafkaOps
) -> bool:
    """Preferred leader election for the plan's partitions. True when done (or given up)."""
    if execution.leaders_elected:
        return True
    keys = [m.key for m in moves if m.state == MoveState.DONE]
    current = kafka.partitions_describe(keys)
    wanted = [
        k
        for k in keys
        if k in current and current[k].replicas and current[k].leader != current[k].replicas[0]
    ]
    errors = kafka.leaders_elect(wanted) if wanted else {}
    failed = {k: e for k, e in errors.items() if e}
    execution.election_attempts += 1
    if failed and execution.election_attempts < MAX_ELECTION_ATTEMPTS:
        # Typically the preferred replica is not in the ISR yet: try again next step.
        execution.save(update_fields=["election_attempts", "updated_at"])
        return False
    execution.leaders_elected = True
    execution.save(update_fields=["leaders_elected", "election_attempts", "updated_at"])
    plan_audit_record(
        actor=EXECUTOR,
        action=ExecutionAction.LEADERS_ELECTED,
        plan=plan,
        after={
            "elected": len(wanted) - len(failed),
            "failed": {f"{t}-{p}": e for (t, p), e in failed.items()},
        },
    )
    return True


def data_loss_leaders_elect(
    *,
    plan: Plan,
    moves: list[PlanMove],
    current: dict[PartitionKey, PartitionInfo],
    kafka: KafkaOps,
) -> None:
    """Confirmed data loss: while such a move has no leader, elect one among its new
    replicas (unclean). Retried every step: right after the batch the new replicas may
    not exist yet."""
    lossy = set(plan.data_loss_partitions)
    leaderless = [
        m.key
        for m in moves
        if m.state == MoveState.IN_PROGRESS
        and f"{m.topic}-{m.partition}" in lossy
        and m.key in current
        and current[m.key].leader is None
    ]
    if leaderless:
        kafka.leaders_elect(leaderless, unclean=True)
