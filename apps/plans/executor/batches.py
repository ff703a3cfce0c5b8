"""A batch of moves sent to Kafka: as many pending moves as the per-broker and
cluster-wide caps allow, biggest first, committed to the database before they are sent
(so a crash after sending can't lose them)."""

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..actions import ExecutionAction
from ..kafka_ops import KafkaOps
from ..models import Execution, MoveState, Plan, PlanMove
from ..services.actors import EXECUTOR
from ..services.plan_audit import plan_audit_record
from ..services.policy import policy_get
from .disk_moves import disk_moves_send


def _touched(move: PlanMove) -> set[int]:
    """Brokers a move loads: those receiving a copy and those dropping one."""
    return set(move.added) | set(move.removed)


def _disk_busy(move: PlanMove) -> set[int]:
    """Brokers on which a move copies a replica between two of their dirs."""
    return {broker for _t, _p, broker in move.disk_targets if broker in move.replicas_before}


def batch_submit(
    *,
    plan: Plan,
    execution: Execution,
    running: list[PlanMove],
    pending: list[PlanMove],
    kafka: KafkaOps,
) -> list[PlanMove]:
    """Send as many pending moves as the per-broker and cluster-wide caps allow (the
    operator's for this run, else the policy's)."""
    policy = policy_get(cluster=plan.cluster)
    per_broker_cap = max(1, execution.max_moves_per_broker or policy.max_moves_per_broker)
    cluster_cap = max(1, execution.max_moves_cluster or policy.max_moves_cluster)
    disk_cap = max(1, settings.EXECUTOR_DISK_MOVES_PER_BROKER)
    load: dict[int, int] = {}
    disk_load: dict[int, int] = {}
    for m in running:
        for b in _touched(m):
            load[b] = load.get(b, 0) + 1
        for b in _disk_busy(m):
            disk_load[b] = disk_load.get(b, 0) + 1
    slots = cluster_cap - len(running)
    chosen: list[PlanMove] = []
    # Biggest first: they set the pace, small ones fill the gaps as slots free up.
    for m in sorted(pending, key=lambda m: (-m.bytes, m.topic, m.partition)):
        if slots <= 0:
            break
        touched = _touched(m)
        if any(load.get(b, 0) >= per_broker_cap for b in touched):
            continue
        disks = _disk_busy(m)
        if any(disk_load.get(b, 0) >= disk_cap for b in disks):
            continue
        busy_disks = {b for b, count in disk_load.items() if count}
        if settings.EXECUTOR_DISK_BROKER_BY_BROKER and disks and busy_disks and disks - busy_disks:
            continue  # another broker's disks are busy: this one waits its turn
        for b in touched:
            load[b] = load.get(b, 0) + 1
        for b in disks:
            disk_load[b] = disk_load.get(b, 0) + 1
        chosen.append(m)
        slots -= 1
    if not chosen:
        return []
    now = timezone.now()
    with transaction.atomic():
        execution.batches += 1
        execution.save(update_fields=["batches", "updated_at"])
        for m in chosen:
            m.state, m.batch, m.started_at = MoveState.IN_PROGRESS, execution.batches, now
            m.submissions += 1
        PlanMove.objects.bulk_update(chosen, ["state", "batch", "started_at", "submissions"])
        plan_audit_record(
            actor=EXECUTOR,
            action=ExecutionAction.BATCH_SUBMITTED,
            plan=plan,
            after={
                "batch": execution.batches,
                "moves": [
                    {"partition": f"{m.topic}-{m.partition}", "to": m.replicas_after}
                    for m in chosen
                ],
            },
        )
    # Sent only after the batch is committed: see the module docstring. Dirs first, as
    # kafka-reassign-partitions does, so a new replica is created in its target dir; one
    # its broker cannot place yet is sent again by the step until it is there.
    targets = {replica: path for m in chosen for replica, path in m.disk_targets.items()}
    _retry, dirs_refused = disk_moves_send(kafka=kafka, targets=targets) if targets else ((), {})
    results: dict = {}
    for m in chosen:
        errors = [e for replica, e in dirs_refused.items() if replica[:2] == m.key]
        if errors:
            results[m.key] = errors[0]
    reassigned = [
        m for m in chosen if m.key not in results and m.replicas_after != m.replicas_before
    ]
    if reassigned:
        moves = {m.key: list(m.replicas_after) for m in reassigned}
        results.update(kafka.reassignments_alter(moves))
    refused = [m for m in chosen if results.get(m.key)]
    for m in refused:
        m.state, m.error, m.finished_at = (
            MoveState.FAILED,
            f"Kafka refused: {results[m.key]}",
            timezone.now(),
        )
    if refused:
        PlanMove.objects.bulk_update(refused, ["state", "error", "finished_at"])
    lossy = set(plan.data_loss_partitions)
    unclean = [m.key for m in chosen if f"{m.topic}-{m.partition}" in lossy and m not in refused]
    if unclean:
        # Every old replica is dead: a new, empty replica must be elected leader
        # (the data loss the approver confirmed) before the move can complete.
        kafka.leaders_elect(unclean, unclean=True)
    return chosen
