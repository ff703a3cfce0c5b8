"""One step of the executor: reconcile the database with Kafka, then do the next thing.

State lives in the database (moves, batches, throttles set) and in Kafka (what is
in flight, current replica lists), never only in the worker's memory. Each
`execution_step` reconciles the two and does the next thing, so a worker killed
at any point is replaced by one that carries on where Kafka is:

- a batch is recorded (moves in_progress, submissions + 1) *before* it is sent,
  so a crash after sending can't lose it, and a crash before sending is seen as
  "in progress in the database, unknown to Kafka, replicas still as before" and
  sent again (the only case `submissions` exceeds 1);
- a move whose replicas already equal its target is done, whoever finished it;
- a move that can't finish (target broker dead, no progress) is cancelled in Kafka and
  failed (doomed.py), which ends the plan once the others in flight have finished;
- throttles are recorded before they are set, and deleted on completion, failure
  and cancel alike.
"""

from django.db import transaction
from django.utils import timezone

from ..actions import ExecutionAction, PlanAction
from ..kafka_ops import KafkaOps, PartitionInfo, PartitionKey, kafka_ops_resolve
from ..models import Execution, MoveState, Plan, PlanMove, PlanState
from ..services.actors import EXECUTOR
from ..services.estimate import plan_estimate
from ..services.throttle_auto import throttle_auto_begin
from ..services.transitions import plan_transition
from .batches import batch_submit
from .disk_moves import disk_moves_send
from .doomed import doomed_moves_fail
from .endings import execution_cancel, execution_finish
from .leaders import data_loss_leaders_elect, preferred_leaders_elect
from .progress import moves_copied_record, progress_update, replica_sizes_get
from .throttles import throttles_remove, throttles_retune, throttles_set


def execution_step(*, plan: Plan, kafka: KafkaOps | None = None) -> bool:
    """Reconcile with Kafka and do what comes next. Returns True once the plan is finished."""
    plan.refresh_from_db()
    kafka = kafka_ops_resolve(cluster=plan.cluster, kafka=kafka)
    if plan.state == PlanState.APPROVED:
        if not _execution_begin(plan=plan, kafka=kafka):
            return True
    if plan.state != PlanState.EXECUTING:
        execution = Execution.objects.filter(plan=plan).first()
        if execution is not None and execution.throttle_applied:
            throttles_remove(plan=plan, execution=execution, kafka=kafka)
        return True
    execution = Execution.objects.get(plan=plan)
    moves = list(plan.moves.all())
    keys = [m.key for m in moves]
    in_flight = kafka.reassignments_list(keys)
    current = kafka.partitions_describe(keys)
    disk_where = _disk_where(moves=moves, kafka=kafka)
    _reconcile(moves=moves, in_flight=in_flight, current=current, disk_where=disk_where)
    if not execution.cancel_requested:  # a cancel drops those new replicas
        _new_replica_dirs_resend(moves=moves, disk_where=disk_where, kafka=kafka)
    moves_copied_record(moves=moves, kafka=kafka)
    data_loss_leaders_elect(plan=plan, moves=moves, current=current, kafka=kafka)

    if execution.cancel_requested:
        execution_cancel(
            plan=plan, execution=execution, moves=moves, in_flight=in_flight, kafka=kafka
        )
        return True
    # A move that can't finish (dead target, no progress) is cancelled and failed now.
    doomed_moves_fail(plan=plan, execution=execution, moves=moves, in_flight=in_flight, kafka=kafka)

    throttles_retune(plan=plan, execution=execution, kafka=kafka)
    running = [m for m in moves if m.state == MoveState.IN_PROGRESS]
    pending = [m for m in moves if m.state == MoveState.PENDING]
    # Paused: nothing new is sent; what is in flight finishes.
    if pending and not execution.paused and not any(m.state == MoveState.FAILED for m in moves):
        if not execution.throttle_applied and any(not m.leader_only for m in pending):
            throttles_set(plan=plan, execution=execution, moves=moves, kafka=kafka)
        batch_submit(plan=plan, execution=execution, running=running, pending=pending, kafka=kafka)
    progress_update(
        plan=plan,
        execution=execution,
        moves=moves,
        current=current,
        kafka=kafka,
        disk_where=disk_where,
    )

    if any(m.state == MoveState.IN_PROGRESS for m in moves):
        return False
    failed = [m for m in moves if m.state == MoveState.FAILED]
    if failed:
        # A failed move stops the plan: what was in flight has finished, the rest is not sent.
        now = timezone.now()
        unsent = [m for m in moves if m.state == MoveState.PENDING]
        for m in unsent:
            m.state, m.finished_at = MoveState.CANCELLED, now
        PlanMove.objects.bulk_update(unsent, ["state", "finished_at"])
        execution_finish(
            plan=plan,
            execution=execution,
            kafka=kafka,
            state=PlanState.FAILED,
            error=f"{len(failed)} move(s) failed: "
            + "; ".join(f"{m.topic}-{m.partition}: {m.error}" for m in failed[:5]),
        )
        return True
    if any(m.state == MoveState.PENDING for m in moves):
        return False
    if not preferred_leaders_elect(plan=plan, execution=execution, moves=moves, kafka=kafka):
        return False
    execution_finish(plan=plan, execution=execution, kafka=kafka, state=PlanState.COMPLETED)
    return True


def _execution_begin(*, plan: Plan, kafka: KafkaOps) -> bool:
    """Approved -> executing, after checking the live cluster still matches the plan."""
    moves = list(plan.moves.all())
    current = kafka.partitions_describe([m.key for m in moves])
    alive = kafka.brokers_alive()
    problem = ""
    for m in moves:
        info = current.get(m.key)
        if info is None:
            problem = f"{m.topic}-{m.partition} no longer exists"
        elif info.replicas != m.replicas_before:
            problem = f"{m.topic}-{m.partition} is now on {info.replicas}, not {m.replicas_before}"
        elif any(b not in alive for b in m.replicas_after):
            dead = next(b for b in m.replicas_after if b not in alive)
            problem = f"{m.topic}-{m.partition} would move to broker {dead}, which is not alive"
        if problem:
            break
    if problem:
        plan_transition(
            plan=plan, to=PlanState.STALE, actor=EXECUTOR, action=PlanAction.STALE, reason=problem
        )
        return False
    sizes = replica_sizes_get(kafka=kafka)
    with transaction.atomic():
        execution, _ = Execution.objects.get_or_create(plan=plan)
        if sizes is not None:
            # The estimate from the live log sizes, at this run's throttle: here in the
            # executor, not in the approval's request (DescribeLogDirs on a slow cluster
            # takes seconds); also each move's bytes, for the progress bar and ETA.
            plan_estimate(plan=plan, sizes=sizes, moves=moves)
        # The plan's one byte figure: what its estimate says the copy moves.
        plan.refresh_from_db(fields=["bytes_to_move"])
        execution.bytes_total = max(plan.bytes_to_move, sum(m.bytes + m.bytes_dirs for m in moves))
        execution.save(update_fields=["bytes_total", "updated_at"])
        throttle_auto_begin(execution=execution)
        plan_transition(
            plan=plan,
            to=PlanState.EXECUTING,
            actor=EXECUTOR,
            action=ExecutionAction.STARTED,
            fields={"started_at": timezone.now()},
        )
    return True


def _disk_where(*, moves: list[PlanMove], kafka: KafkaOps) -> dict[tuple[str, int, int], str]:
    """The dir of every replica, when an active move names dirs (else not asked)."""
    active = (MoveState.PENDING, MoveState.IN_PROGRESS)
    if not any(m.state in active and m.log_dirs_after for m in moves):
        return {}
    return kafka.replica_log_dirs()


def _disks_left(move: PlanMove, disk_where: dict[tuple[str, int, int], str]) -> dict:
    """The move's dir targets Kafka does not report reached yet."""
    return {r: path for r, path in move.disk_targets.items() if disk_where.get(r) != path}


def _new_replica_dirs_resend(
    *, moves: list[PlanMove], disk_where: dict[tuple[str, int, int], str], kafka: KafkaOps
) -> None:
    """A new replica's target dir, sent again until its broker hosts it and takes it (as
    kafka-reassign-partitions does): the first sending may come before the replica."""
    targets = {
        replica: path
        for m in moves
        if m.state == MoveState.IN_PROGRESS
        for replica, path in _disks_left(m, disk_where).items()
        if replica[2] in m.added
    }
    if targets:
        disk_moves_send(kafka=kafka, targets=targets)


def _reconcile(
    *,
    moves: list[PlanMove],
    in_flight: dict[PartitionKey, dict],
    current: dict[PartitionKey, PartitionInfo],
    disk_where: dict[tuple[str, int, int], str],
) -> None:
    now = timezone.now()
    changed = []
    for m in moves:
        if m.state not in (MoveState.PENDING, MoveState.IN_PROGRESS):
            continue
        key = m.key
        info = current.get(key)
        if info is None:
            m.state, m.error, m.finished_at = MoveState.FAILED, "partition no longer exists", now
        elif key not in in_flight and info.replicas == m.replicas_after:
            if _disks_left(m, disk_where):
                continue  # the replicas are in place, their copies between dirs are not
            m.state, m.finished_at = MoveState.DONE, now
            m.bytes_done = max(m.bytes_done, m.bytes + m.bytes_dirs)
        elif m.state == MoveState.IN_PROGRESS and key not in in_flight:
            if set(info.replicas) == set(m.replicas_before) | set(m.replicas_after):
                # Done at the controller, the broker's metadata not there yet: look again.
                continue
            if info.replicas == m.replicas_before:
                # Recorded but never reached Kafka (crash in between): send it again.
                m.state = MoveState.PENDING
            else:
                m.state, m.finished_at = MoveState.FAILED, now
                m.error = f"replicas changed outside this plan: now {info.replicas}"
        elif m.state == MoveState.PENDING and info.replicas != m.replicas_before:
            m.state, m.finished_at = MoveState.FAILED, now
            m.error = f"replicas changed outside this plan: now {info.replicas}"
        else:
            continue
        changed.append(m)
    if changed:
        PlanMove.objects.bulk_update(changed, ["state", "error", "finished_at", "bytes_done"])
