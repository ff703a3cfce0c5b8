"""How an execution ends: completed, failed or cancelled, always with its in-flight
moves settled and its throttles removed."""

import logging

from django.db import transaction
from django.utils import timezone

from ..actions import EXECUTION_ENDED, ExecutionAction
from ..kafka_ops import KafkaOpError, KafkaOps, PartitionKey, kafka_ops_resolve
from ..models import Execution, MoveState, Plan, PlanMove, PlanState
from ..services.actors import EXECUTOR
from ..services.demotions import brokers_demoted_record
from ..services.drains import brokers_drained_record, drains_rolled_back
from ..services.plan_audit import plan_audit_record
from ..services.transitions import plan_transition
from .disk_moves import disk_copies_revert, disk_copies_to_stop
from .throttles import throttles_remove

logger = logging.getLogger(__name__)


def execution_finish(
    *, plan: Plan, execution: Execution, kafka: KafkaOps, state: str, error: str = ""
) -> None:
    """Remove the throttles, then move the plan to its final `state`; a completed
    remove-brokers plan marks its brokers drained in the same transaction, a completed
    rollback of one undrains them, a completed demote plan marks its brokers demoted."""
    throttles_remove(plan=plan, execution=execution, kafka=kafka)
    with transaction.atomic():
        plan_transition(
            plan=plan,
            to=state,
            actor=EXECUTOR,
            action=EXECUTION_ENDED[state],
            reason=error,
            fields={"finished_at": timezone.now(), "error": error},
        )
        brokers_drained_record(plan=plan, actor=EXECUTOR)
        drains_rolled_back(plan=plan, actor=EXECUTOR)
        brokers_demoted_record(plan=plan, actor=EXECUTOR)


def execution_cancel(
    *,
    plan: Plan,
    execution: Execution,
    moves: list[PlanMove],
    in_flight: dict[PartitionKey, dict],
    kafka: KafkaOps,
) -> None:
    """No new batches; cancel ours in flight (Kafka reverts them), copies between dirs
    included (sent back to their source dir); remove throttles."""
    ours = [m for m in moves if m.state == MoveState.IN_PROGRESS]
    to_cancel = {m.key: None for m in ours if m.key in in_flight}
    dirs_back = disk_copies_revert(kafka=kafka, targets=disk_copies_to_stop(ours, set(to_cancel)))
    results = kafka.reassignments_cancel(list(to_cancel)) if to_cancel else {}
    # Kafka reverts a cancelled move to its original replica *set* but not its order;
    # put the order back too (a reordering copies no data).
    reverted = {
        m.key: list(m.replicas_before)
        for m in ours
        if m.key in to_cancel and results.get(m.key) is None
    }
    if reverted:
        kafka.reassignments_alter(reverted)
    now = timezone.now()
    for m in moves:
        if m.state in (MoveState.PENDING, MoveState.IN_PROGRESS):
            m.state, m.finished_at = MoveState.CANCELLED, now
            error = results.get(m.key)
            if error and error != "NoReassignmentInProgressError":
                m.error = f"cancel refused: {error}"
    PlanMove.objects.bulk_update(moves, ["state", "finished_at", "error"])
    plan_audit_record(
        actor=EXECUTOR,
        action=ExecutionAction.REASSIGNMENTS_CANCELLED,
        plan=plan,
        after={
            "cancelled": [f"{t}-{p}" for t, p in to_cancel],
            "dirs_reverted": {
                f"{t}-{p}@{b}": path for (t, p, b), path in sorted(dirs_back.items())
            },
        },
    )
    execution_finish(plan=plan, execution=execution, kafka=kafka, state=PlanState.CANCELLED)


def execution_fail(*, plan: Plan, error: str, kafka: KafkaOps | None = None) -> None:
    """Give up on a plan: cancel what is in flight, remove throttles, mark it failed."""
    plan.refresh_from_db()
    kafka = kafka_ops_resolve(cluster=plan.cluster, kafka=kafka)
    if plan.state != PlanState.EXECUTING:
        return
    execution = Execution.objects.get(plan=plan)
    moves = list(plan.moves.filter(state=MoveState.IN_PROGRESS))
    to_cancel: list[PartitionKey] = []
    try:
        in_flight = kafka.reassignments_list([m.key for m in moves])
        to_cancel = [m.key for m in moves if m.key in in_flight]
        if to_cancel:
            kafka.reassignments_cancel(to_cancel)
    except KafkaOpError as exc:
        logger.warning("plan %s: could not cancel in-flight moves: %s", plan.pk, exc)
    try:
        disk_copies_revert(kafka=kafka, targets=disk_copies_to_stop(moves, set(to_cancel)))
    except KafkaOpError as exc:
        logger.warning("plan %s: could not stop copies between dirs: %s", plan.pk, exc)
    now = timezone.now()
    for m in moves:
        m.state, m.finished_at = MoveState.CANCELLED, now
    PlanMove.objects.bulk_update(moves, ["state", "finished_at"])
    plan.moves.filter(state=MoveState.PENDING).update(state=MoveState.CANCELLED, finished_at=now)
    try:
        throttles_remove(plan=plan, execution=execution, kafka=kafka)
    except KafkaOpError as exc:
        error += f"; throttles not yet removed ({exc}), retried by the resume sweep"
    plan_transition(
        plan=plan,
        to=PlanState.FAILED,
        actor=EXECUTOR,
        action=ExecutionAction.FAILED,
        reason=error,
        fields={"finished_at": now, "error": error},
    )
