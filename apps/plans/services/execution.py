"""The executor: runs an approved plan on the live cluster, resumably.

State lives in the database (moves, batches, throttles set) and in Kafka (what is
in flight, current replica lists), never only in the worker's memory. Each
`execution_step` reconciles the two and does the next thing, so a worker killed
at any point is replaced by one that carries on where Kafka is:

- a batch is recorded (moves in_progress, submissions + 1) *before* it is sent,
  so a crash after sending can't lose it, and a crash before sending is seen as
  "in progress in the database, unknown to Kafka, replicas still as before" and
  sent again (the only case `submissions` exceeds 1);
- a move whose replicas already equal its target is done, whoever finished it;
- throttles are recorded before they are set, and removed (restoring any value
  found before) on completion, failure and cancel alike.

`execution_run` loops steps under a lease, so two workers never step one plan.
"""

import logging
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from apps.audit.services import actor_system, audit_record

from ..kafka_ops import (
    BROKER_THROTTLE_KEYS,
    TOPIC_THROTTLE_KEYS,
    KafkaOpError,
    KafkaOps,
    LiveKafka,
    PartitionInfo,
)
from ..models import ACTIVE_STATES, Execution, MoveState, Plan, PlanMove, PlanState
from ..queue import execution_enqueue
from ..signals import execution_progressed
from .lifecycle import _transition

logger = logging.getLogger(__name__)

EXECUTOR = actor_system(name="executor")
MAX_CONSECUTIVE_ERRORS = 10
MAX_ELECTION_ATTEMPTS = 15
PartitionKey = tuple[str, int]


def _key(move: PlanMove) -> PartitionKey:
    return (move.topic, move.partition)


def _touched(move: PlanMove) -> set[int]:
    """Brokers a move loads: those receiving a copy and those dropping one."""
    return set(move.added) | set(move.removed)


def _kafka_for(plan: Plan, kafka: KafkaOps | None) -> KafkaOps:
    return kafka if kafka is not None else LiveKafka(cluster=plan.cluster)


# --- one step --------------------------------------------------------------------------------


def execution_step(*, plan: Plan, kafka: KafkaOps | None = None) -> bool:
    """Reconcile with Kafka and do what comes next. Returns True once the plan is finished."""
    plan.refresh_from_db()
    kafka = _kafka_for(plan, kafka)
    if plan.state == PlanState.APPROVED:
        if not _execution_begin(plan=plan, kafka=kafka):
            return True
    if plan.state != PlanState.EXECUTING:
        execution = Execution.objects.filter(plan=plan).first()
        if execution is not None and execution.throttle_applied:
            _throttle_clear(plan=plan, execution=execution, kafka=kafka)
        return True
    execution = Execution.objects.get(plan=plan)
    moves = list(plan.moves.all())
    keys = [_key(m) for m in moves]
    in_flight = kafka.reassignments_list(keys)
    current = kafka.partitions_describe(keys)
    _reconcile(moves=moves, in_flight=in_flight, current=current)
    _data_loss_leaders_elect(plan=plan, moves=moves, current=current, kafka=kafka)

    if execution.cancel_requested:
        _execution_cancel(
            plan=plan, execution=execution, moves=moves, in_flight=in_flight, kafka=kafka
        )
        return True

    running = [m for m in moves if m.state == MoveState.IN_PROGRESS]
    pending = [m for m in moves if m.state == MoveState.PENDING]
    if pending and not any(m.state == MoveState.FAILED for m in moves):
        if not execution.throttle_applied and any(not m.leader_only for m in pending):
            _throttle_apply(plan=plan, execution=execution, moves=moves, kafka=kafka)
        _batch_submit(plan=plan, execution=execution, running=running, pending=pending, kafka=kafka)
    _progress_update(plan=plan, execution=execution, moves=moves, current=current, kafka=kafka)

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
        _execution_finish(
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
    if not _leaders_elect(plan=plan, execution=execution, moves=moves, kafka=kafka):
        return False
    _execution_finish(plan=plan, execution=execution, kafka=kafka, state=PlanState.COMPLETED)
    return True


def _execution_begin(*, plan: Plan, kafka: KafkaOps) -> bool:
    """Approved -> executing, after checking the live cluster still matches the plan."""
    moves = list(plan.moves.all())
    current = kafka.partitions_describe([_key(m) for m in moves])
    alive = kafka.brokers_alive()
    problem = ""
    for m in moves:
        info = current.get(_key(m))
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
        _transition(
            plan=plan, to=PlanState.STALE, actor=EXECUTOR, action="plan.stale", reason=problem
        )
        return False
    sizes = _sizes_safe(kafka)
    with transaction.atomic():
        execution, _ = Execution.objects.get_or_create(plan=plan)
        if sizes is not None:
            # Bytes to copy from the live log sizes: the planner's may be estimates or absent.
            for m in moves:
                leader_size = max(
                    (sizes.get((m.topic, m.partition, b), 0) for b in m.replicas_before), default=0
                )
                m.bytes = leader_size * len(m.added)
            PlanMove.objects.bulk_update(moves, ["bytes"])
        execution.bytes_total = sum(m.bytes for m in moves)
        execution.save(update_fields=["bytes_total", "updated_at"])
        _transition(
            plan=plan,
            to=PlanState.EXECUTING,
            actor=EXECUTOR,
            action="execution.started",
            fields={"started_at": timezone.now()},
        )
    return True


def _reconcile(
    *,
    moves: list[PlanMove],
    in_flight: dict[PartitionKey, dict],
    current: dict[PartitionKey, PartitionInfo],
) -> None:
    now = timezone.now()
    changed = []
    for m in moves:
        if m.state not in (MoveState.PENDING, MoveState.IN_PROGRESS):
            continue
        key = _key(m)
        info = current.get(key)
        if info is None:
            m.state, m.error, m.finished_at = MoveState.FAILED, "partition no longer exists", now
        elif key not in in_flight and info.replicas == m.replicas_after:
            m.state, m.finished_at, m.bytes_done = MoveState.DONE, now, m.bytes
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


def _batch_submit(
    *,
    plan: Plan,
    execution: Execution,
    running: list[PlanMove],
    pending: list[PlanMove],
    kafka: KafkaOps,
) -> list[PlanMove]:
    """Send as many pending moves as the per-broker and cluster-wide caps allow."""
    from .lifecycle import policy_get

    policy = policy_get(cluster=plan.cluster)
    per_broker_cap = max(1, policy.max_moves_per_broker)
    cluster_cap = max(1, policy.max_moves_cluster)
    load: dict[int, int] = {}
    for m in running:
        for b in _touched(m):
            load[b] = load.get(b, 0) + 1
    slots = cluster_cap - len(running)
    chosen: list[PlanMove] = []
    # Biggest first: they set the pace, small ones fill the gaps as slots free up.
    for m in sorted(pending, key=lambda m: (-m.bytes, m.topic, m.partition)):
        if slots <= 0:
            break
        touched = _touched(m)
        if any(load.get(b, 0) >= per_broker_cap for b in touched):
            continue
        for b in touched:
            load[b] = load.get(b, 0) + 1
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
        audit_record(
            actor=EXECUTOR,
            action="execution.batch_submitted",
            obj=plan,
            after={
                "batch": execution.batches,
                "moves": [
                    {"partition": f"{m.topic}-{m.partition}", "to": m.replicas_after}
                    for m in chosen
                ],
            },
        )
    # Sent only after the batch is committed: see the module docstring.
    results = kafka.reassignments_alter({_key(m): list(m.replicas_after) for m in chosen})
    refused = [m for m in chosen if results.get(_key(m))]
    for m in refused:
        m.state, m.error, m.finished_at = (
            MoveState.FAILED,
            f"Kafka refused: {results[_key(m)]}",
            timezone.now(),
        )
    if refused:
        PlanMove.objects.bulk_update(refused, ["state", "error", "finished_at"])
    lossy = set(plan.data_loss_partitions)
    unclean = [_key(m) for m in chosen if f"{m.topic}-{m.partition}" in lossy and m not in refused]
    if unclean:
        # Every old replica is dead: a new, empty replica must be elected leader
        # (the data loss the approver confirmed) before the move can complete.
        kafka.leaders_elect(unclean, unclean=True)
    return chosen


def _data_loss_leaders_elect(
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
        _key(m)
        for m in moves
        if m.state == MoveState.IN_PROGRESS
        and f"{m.topic}-{m.partition}" in lossy
        and _key(m) in current
        and current[_key(m)].leader is None
    ]
    if leaderless:
        kafka.leaders_elect(leaderless, unclean=True)


def _sizes_safe(kafka: KafkaOps) -> dict[tuple[str, int, int], int] | None:
    try:
        return kafka.replica_sizes()
    except KafkaOpError as exc:
        logger.warning("replica sizes unavailable: %s", exc)
        return None


def _progress_update(
    *,
    plan: Plan,
    execution: Execution,
    moves: list[PlanMove],
    current: dict[PartitionKey, PartitionInfo],
    kafka: KafkaOps,
) -> None:
    """Bytes copied so far (replica sizes on the receiving brokers), rate and ETA."""
    running = [m for m in moves if m.state == MoveState.IN_PROGRESS and m.bytes]
    sizes = _sizes_safe(kafka) if running else {}
    if sizes is None:
        return
    for m in running:
        source = max(
            (sizes.get((m.topic, m.partition, b), 0) for b in m.replicas_before), default=0
        )
        copied = sum(min(sizes.get((m.topic, m.partition, b), 0), source) for b in m.added)
        m.bytes_done = min(copied, m.bytes)
    if running:
        PlanMove.objects.bulk_update(running, ["bytes_done"])
    done = sum(m.bytes if m.state == MoveState.DONE else m.bytes_done for m in moves)
    now = timezone.now()
    previous_at = execution.heartbeat_at
    if previous_at is not None and done >= execution.bytes_done:
        elapsed = (now - previous_at).total_seconds()
        if elapsed > 0:
            rate = (done - execution.bytes_done) / elapsed
            # Smoothed: one slow poll should not swing the ETA.
            old = execution.rate_bytes_per_sec
            execution.rate_bytes_per_sec = rate if old is None else 0.7 * old + 0.3 * rate
    remaining = max(execution.bytes_total - done, 0)
    rate = execution.rate_bytes_per_sec
    execution.eta_seconds = remaining / rate if rate and rate > 0 else None
    execution.bytes_done = done
    execution.heartbeat_at = now
    execution.save(
        update_fields=[
            "bytes_done",
            "rate_bytes_per_sec",
            "eta_seconds",
            "heartbeat_at",
            "updated_at",
        ]
    )
    # Live plan pages redraw the progress bar now rather than at the next audited step.
    execution_progressed.send_robust(
        sender=Plan,
        plan=plan,
        done=sum(m.state == MoveState.DONE for m in moves),
        total=len(moves),
        bytes_done=done,
    )


def _leaders_elect(
    *, plan: Plan, execution: Execution, moves: list[PlanMove], kafka: KafkaOps
) -> bool:
    """Preferred leader election for the plan's partitions. True when done (or given up)."""
    if execution.leaders_elected:
        return True
    keys = [_key(m) for m in moves if m.state == MoveState.DONE]
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
    audit_record(
        actor=EXECUTOR,
        action="execution.leaders_elected",
        obj=plan,
        after={
            "elected": len(wanted) - len(failed),
            "failed": {f"{t}-{p}": e for (t, p), e in failed.items()},
        },
    )
    return True


# --- throttles ---------------------------------------------------------------------------------


def _throttle_apply(
    *, plan: Plan, execution: Execution, moves: list[PlanMove], kafka: KafkaOps
) -> None:
    from .lifecycle import policy_get

    rate = int(policy_get(cluster=plan.cluster).throttle_bytes_per_sec)
    if rate <= 0:
        return
    data_moves = [m for m in moves if not m.leader_only and m.state != MoveState.DONE]
    alive = kafka.brokers_alive()
    brokers = sorted({b for m in data_moves for b in m.replicas_before + m.replicas_after} & alive)
    leader_replicas: dict[str, list[str]] = {}
    follower_replicas: dict[str, list[str]] = {}
    for m in data_moves:
        # As kafka-reassign-partitions.sh: throttle the current replicas as leaders
        # (they send) and the new ones as followers (they fetch).
        leader_replicas.setdefault(m.topic, []).extend(
            f"{m.partition}:{b}" for b in m.replicas_before
        )
        follower_replicas.setdefault(m.topic, []).extend(f"{m.partition}:{b}" for b in m.added)
    topics = sorted(leader_replicas)
    # Recorded before anything is set, so a crash right after still gets cleaned up.
    execution.throttle = {"rate": rate, "brokers": brokers, "topics": topics}
    execution.throttle_applied = True
    execution.save(update_fields=["throttle", "throttle_applied", "updated_at"])
    broker_values = {b: {k: str(rate) for k in BROKER_THROTTLE_KEYS} for b in brokers}
    topic_values = {
        t: {
            k: ",".join(v)
            for k, v in (
                (TOPIC_THROTTLE_KEYS[0], leader_replicas[t]),
                (TOPIC_THROTTLE_KEYS[1], follower_replicas.get(t, [])),
            )
            if v
        }
        for t in topics
    }
    kafka.configs_write(broker_values, topic_values)
    # Dynamic configs reach the brokers asynchronously: a batch sent before would copy
    # unthrottled for a moment.
    if not kafka.broker_rates_wait(brokers, str(rate), timeout=10.0):
        logger.warning("plan %s: throttle not yet visible on every broker", plan.pk)
    audit_record(
        actor=EXECUTOR,
        action="execution.throttle_set",
        obj=plan,
        after={"rate": rate, "brokers": brokers, "topics": topic_values},
    )


def _throttle_clear(*, plan: Plan, execution: Execution, kafka: KafkaOps) -> None:
    """Delete the throttles this execution set, as kafka-reassign-partitions.sh --verify
    does. Raises KafkaOpError if it can't; the caller (or the resume sweep) retries.

    Deleted rather than restored to an earlier value: a value read just after another
    plan's cleanup may still be that plan's (configs propagate asynchronously), and
    restoring it would leave a throttle behind for good."""
    if not execution.throttle_applied:
        return
    recorded = execution.throttle or {}
    alive = kafka.brokers_alive()
    brokers = [int(b) for b in recorded.get("brokers", [])]
    # A dead broker can't be reached; it lost its dynamic rate only if it is replaced.
    skipped = [b for b in brokers if b not in alive]
    broker_values: dict[int, dict[str, str | None]] = {
        b: dict.fromkeys(BROKER_THROTTLE_KEYS) for b in brokers if b in alive
    }
    topic_values: dict[str, dict[str, str | None]] = {
        t: dict.fromkeys(TOPIC_THROTTLE_KEYS) for t in recorded.get("topics", [])
    }
    kafka.configs_write(broker_values, topic_values)
    execution.throttle_applied = False
    execution.save(update_fields=["throttle_applied", "updated_at"])
    audit_record(
        actor=EXECUTOR,
        action="execution.throttle_removed",
        obj=plan,
        before={"rate": recorded.get("rate")},
        after={
            "brokers": sorted(broker_values),
            "topics": sorted(topic_values),
            "unreachable": skipped,
        },
    )


# --- endings ------------------------------------------------------------------------------------


def _execution_finish(
    *, plan: Plan, execution: Execution, kafka: KafkaOps, state: str, error: str = ""
) -> None:
    _throttle_clear(plan=plan, execution=execution, kafka=kafka)
    _transition(
        plan=plan,
        to=state,
        actor=EXECUTOR,
        action=f"execution.{state}",
        reason=error,
        fields={"finished_at": timezone.now(), "error": error},
    )


def _execution_cancel(
    *,
    plan: Plan,
    execution: Execution,
    moves: list[PlanMove],
    in_flight: dict[PartitionKey, dict],
    kafka: KafkaOps,
) -> None:
    """No new batches; cancel ours in flight (Kafka reverts them); remove throttles."""
    ours = [m for m in moves if m.state == MoveState.IN_PROGRESS]
    to_cancel = {_key(m): None for m in ours if _key(m) in in_flight}
    results = kafka.reassignments_alter(to_cancel) if to_cancel else {}
    # Kafka reverts a cancelled move to its original replica *set* but not its order;
    # put the order back too (a reordering copies no data).
    reverted = {
        _key(m): list(m.replicas_before)
        for m in ours
        if _key(m) in to_cancel and results.get(_key(m)) is None
    }
    if reverted:
        kafka.reassignments_alter(reverted)
    now = timezone.now()
    for m in moves:
        if m.state in (MoveState.PENDING, MoveState.IN_PROGRESS):
            m.state, m.finished_at = MoveState.CANCELLED, now
            error = results.get(_key(m))
            if error and error != "NoReassignmentInProgressError":
                m.error = f"cancel refused: {error}"
    PlanMove.objects.bulk_update(moves, ["state", "finished_at", "error"])
    audit_record(
        actor=EXECUTOR,
        action="execution.reassignments_cancelled",
        obj=plan,
        after={"cancelled": [f"{t}-{p}" for t, p in to_cancel]},
    )
    _execution_finish(plan=plan, execution=execution, kafka=kafka, state=PlanState.CANCELLED)


def execution_fail(*, plan: Plan, error: str, kafka: KafkaOps | None = None) -> None:
    """Give up on a plan: cancel what is in flight, remove throttles, mark it failed."""
    plan.refresh_from_db()
    kafka = _kafka_for(plan, kafka)
    if plan.state != PlanState.EXECUTING:
        return
    execution = Execution.objects.get(plan=plan)
    moves = list(plan.moves.filter(state=MoveState.IN_PROGRESS))
    try:
        in_flight = kafka.reassignments_list([_key(m) for m in moves])
        to_cancel = {_key(m): None for m in moves if _key(m) in in_flight}
        if to_cancel:
            kafka.reassignments_alter(to_cancel)
    except KafkaOpError as exc:
        logger.warning("plan %s: could not cancel in-flight moves: %s", plan.pk, exc)
    now = timezone.now()
    for m in moves:
        m.state, m.finished_at = MoveState.CANCELLED, now
    PlanMove.objects.bulk_update(moves, ["state", "finished_at"])
    plan.moves.filter(state=MoveState.PENDING).update(state=MoveState.CANCELLED, finished_at=now)
    try:
        _throttle_clear(plan=plan, execution=execution, kafka=kafka)
    except KafkaOpError as exc:
        error += f"; throttles not yet removed ({exc}), retried by the resume sweep"
    _transition(
        plan=plan,
        to=PlanState.FAILED,
        actor=EXECUTOR,
        action="execution.failed",
        reason=error,
        fields={"finished_at": now, "error": error},
    )


# --- the loop and its lease --------------------------------------------------------------------


def _lease_take(*, plan: Plan, owner: str) -> bool:
    now = timezone.now()
    until = now + timedelta(seconds=float(settings.EXECUTOR_LEASE_SECONDS))
    execution, _ = Execution.objects.get_or_create(plan=plan)
    taken = (
        Execution.objects.filter(pk=execution.pk)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now) | Q(lease_owner=owner))
        .update(lease_owner=owner, lease_until=until)
    )
    return bool(taken)


def _lease_release(*, plan: Plan, owner: str) -> None:
    Execution.objects.filter(plan=plan, lease_owner=owner).update(lease_owner="", lease_until=None)


def execution_run(
    *,
    plan: Plan,
    kafka: KafkaOps | None = None,
    poll_interval: float | None = None,
    max_seconds: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Plan:
    """Step the plan until it is finished (or `max_seconds` pass), holding the lease.

    Kafka errors are retried; after MAX_CONSECUTIVE_ERRORS in a row the plan fails
    (in-flight moves cancelled, throttles removed)."""
    owner = uuid.uuid4().hex
    if not _lease_take(plan=plan, owner=owner):
        logger.info("plan %s is being executed by another worker", plan.pk)
        return plan
    Execution.objects.filter(plan=plan).update(runs=F("runs") + 1)
    kafka = _kafka_for(plan, kafka)
    poll = float(settings.EXECUTOR_POLL_INTERVAL if poll_interval is None else poll_interval)
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    try:
        while True:
            try:
                finished = execution_step(plan=plan, kafka=kafka)
                Execution.objects.filter(plan=plan).update(consecutive_errors=0)
            except KafkaOpError as exc:
                finished = _step_error(plan=plan, error=str(exc), kafka=kafka)
            if finished:
                break
            if deadline is not None and time.monotonic() > deadline:
                break
            if not _lease_take(plan=plan, owner=owner):
                logger.warning("plan %s: lease lost, another worker carries on", plan.pk)
                break
            sleep(poll)
    finally:
        _lease_release(plan=plan, owner=owner)
    plan.refresh_from_db()
    return plan


def _step_error(*, plan: Plan, error: str, kafka: KafkaOps) -> bool:
    execution = Execution.objects.get(plan=plan)
    execution.consecutive_errors += 1
    execution.last_error = error
    execution.save(update_fields=["consecutive_errors", "last_error", "updated_at"])
    logger.warning(
        "plan %s step failed (%s in a row): %s", plan.pk, execution.consecutive_errors, error
    )
    if execution.consecutive_errors < MAX_CONSECUTIVE_ERRORS:
        return False
    execution_fail(plan=plan, error=f"Kafka kept failing: {error}", kafka=kafka)
    return True


def executions_resume(*, now: datetime | None = None) -> list[int]:
    """Enqueue every approved / executing plan nobody holds a live lease on (a killed
    worker's), and retry throttle removal of finished plans that could not clean up."""
    now = now or timezone.now()
    ids = []
    for plan in Plan.objects.filter(state__in=ACTIVE_STATES).select_related("execution"):
        execution = getattr(plan, "execution", None)
        if execution is not None and execution.lease_until and execution.lease_until > now:
            continue
        ids.append(plan.pk)
    leftovers = Plan.objects.filter(execution__throttle_applied=True).exclude(
        state__in=ACTIVE_STATES
    )
    ids.extend(p.pk for p in leftovers)
    for plan_id in ids:
        execution_enqueue(plan_id=plan_id)
    return ids
