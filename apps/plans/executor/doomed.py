"""Moves that can't finish: their target broker is dead beyond a short grace
(EXECUTOR_DEAD_TARGET_GRACE), or they copied nothing for EXECUTOR_STALL_TIMEOUT (bytes
to new brokers and, on JBOD, into a replica's new dir count alike).

Such a move is cancelled in Kafka (AlterPartitionReassignments with no target: Kafka
drops the replicas it added and goes back to the original set; a copy between two
dirs of a broker is sent back to its source dir, which drops the future replica),
failed with the reason and audited. A failed move stops new batches, so the plan ends
failed once the moves that can finish have finished (step.py), its throttles removed;
detection can then see the dead broker and propose self-healing. Without this a plan
waits forever for a broker that is gone or a copy that stopped, and detection skips a
cluster while a plan executes.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from ..actions import ExecutionAction
from ..kafka_ops import KafkaOps, PartitionKey
from ..models import Execution, MoveState, Plan, PlanMove
from ..services.actors import EXECUTOR
from ..services.plan_audit import plan_audit_record
from .disk_moves import disk_copies_revert, disk_copies_to_stop

logger = logging.getLogger(__name__)


def dead_targets_track(
    *, execution: Execution, moves: list[PlanMove], alive: set[int], now: datetime
) -> dict[int, datetime]:
    """Since when each target broker of a running move has been seen dead (recorded on
    the execution, so a resumed worker keeps counting from the first sighting)."""
    targets = {b for m in moves if m.state == MoveState.IN_PROGRESS for b in m.replicas_after}
    recorded = {int(b): parse_datetime(t) for b, t in (execution.dead_brokers or {}).items()}
    dead = {b: recorded.get(b) or now for b in sorted(targets - alive)}
    if dead != recorded:
        execution.dead_brokers = {str(b): t.isoformat() for b, t in dead.items()}
        execution.save(update_fields=["dead_brokers", "updated_at"])
    return dead


def doomed_reason(*, move: PlanMove, dead_since: dict[int, datetime], now: datetime) -> str | None:
    """Why a running move can't finish, or None while it still may."""
    grace = timedelta(seconds=float(settings.EXECUTOR_DEAD_TARGET_GRACE))
    for broker in move.replicas_after:
        since = dead_since.get(broker)
        if since is not None and now - since >= grace:
            seconds = int((now - since).total_seconds())
            return f"target broker {broker} dead for {seconds} s"
    stall = timedelta(seconds=float(settings.EXECUTOR_STALL_TIMEOUT))
    last = move.progressed_at or move.started_at
    if last is not None and now - last >= stall:
        return f"no progress for {int((now - last).total_seconds())} s"
    return None


def doomed_moves_fail(
    *,
    plan: Plan,
    execution: Execution,
    moves: list[PlanMove],
    in_flight: dict[PartitionKey, dict],
    kafka: KafkaOps,
) -> list[PlanMove]:
    """Cancel in Kafka and fail every running move that can't finish. Returns them."""
    running = [m for m in moves if m.state == MoveState.IN_PROGRESS]
    if not running:
        if execution.dead_brokers:
            execution.dead_brokers = {}
            execution.save(update_fields=["dead_brokers", "updated_at"])
        return []
    now = timezone.now()
    dead_since = dead_targets_track(
        execution=execution, moves=moves, alive=kafka.brokers_alive(), now=now
    )
    reasons = {}
    for m in running:
        reason = doomed_reason(move=m, dead_since=dead_since, now=now)
        if reason:
            reasons[m.key] = reason
    doomed = [m for m in running if m.key in reasons]
    if not doomed:
        return []
    keys = [m.key for m in doomed if m.key in in_flight]
    results = kafka.reassignments_cancel(keys) if keys else {}
    # after the cancel, as when giving up: a failed DescribeLogDirs leaves none running
    disk_copies_revert(kafka=kafka, targets=disk_copies_to_stop(doomed, set(keys)))
    for m in doomed:
        m.state, m.finished_at = MoveState.FAILED, now
        m.error = reasons[m.key] + ": cancelled in Kafka"
        error = results.get(m.key)
        if error and error != "NoReassignmentInProgressError":
            # Left for the operator to see; the resume of a failed plan doesn't retry it.
            m.error = reasons[m.key] + f": cancel refused ({error})"
            logger.warning("plan %s: cancel of %s refused: %s", plan.pk, m.key, error)
    with transaction.atomic():
        PlanMove.objects.bulk_update(doomed, ["state", "error", "finished_at"])
        plan_audit_record(
            actor=EXECUTOR,
            action=ExecutionAction.MOVES_FAILED,
            plan=plan,
            after={"moves": {f"{m.topic}-{m.partition}": m.error for m in doomed}},
            reason="; ".join(sorted(set(reasons.values()))),
        )
    return doomed
