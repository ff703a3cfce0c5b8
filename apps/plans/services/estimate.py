"""A plan's estimate: bytes to copy from its replicas' log sizes now, and how long
copying them should take. Made at proposal and again at approval, so the page
shows what the cluster holds when the operator decides, not an old window's guess."""

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from django.db import transaction
from django.utils import timezone

from apps.clusters.models import Cluster
from apps.metrics.selectors import partition_loads_latest

from ..kafka_ops import KafkaOpError, KafkaOps, kafka_ops_resolve
from ..models import Execution, MoveState, Plan, PlanMove, PlanState
from .policy import policy_get

logger = logging.getLogger(__name__)

ReplicaSizes = dict[tuple[str, int, int], int]


class MoveSized(Protocol):
    """What the estimate reads of a move: a stored PlanMove, or one being created."""

    topic: str
    partition: int
    replicas_before: list[int]
    bytes: int
    bytes_dirs: int

    @property
    def added(self) -> list[int]: ...


def move_bytes_from_logs(*, moves: list[PlanMove], sizes: ReplicaSizes) -> None:
    """Each move's bytes: its largest current replica (the one a new replica catches
    up with) times the replicas it adds. A partition Kafka reports no replica of keeps
    the bytes it had. And its bytes between dirs: the replicas it moves to another dir
    of their broker (JBOD)."""
    for m in moves:
        keys = [(m.topic, m.partition, b) for b in m.replicas_before]
        known = [sizes[k] for k in keys if k in sizes]
        if known:
            m.bytes = max(known) * len(m.added)
            m.bytes_dirs = sum(sizes.get(replica, max(known)) for replica in m.dir_copies)


# A broker left less than this share of the throttle once the moved partitions' writes
# are served does not catch up in any time worth forecasting: the copy is said to
# stall at this throttle instead of being given a made-up duration.
CATCH_UP_MIN_SHARE = 0.05


@dataclass(frozen=True)
class CopyTime:
    """How long the copy should take (None: unknown), and why not when it is None."""

    seconds: float | None
    note: str = ""


def duration_estimate(
    *,
    cluster: Cluster,
    moves: Sequence[MoveSized],
    throttle_rate: int | None,
    rates: dict[tuple[str, int], float] | None = None,
) -> CopyTime:
    """How long the copy should take. The throttle caps each broker, so the slowest
    broker sets the pace: what it sends or receives, at the throttle less what the
    partitions' writes take of it meanwhile (a new replica fetches those too, and the
    leader's throttle also carries its existing followers). When the writes leave a
    broker (almost) nothing, the copy stalls at this throttle: no duration, a note
    saying so. The overhead (throttles set, batches polled, leaders elected) is what
    the cluster's last completed throttled run took beyond that. Without a throttle
    the last unthrottled run's pace stands in; unknown before a first one."""
    if not any(m.bytes > 0 and m.added for m in moves):
        return CopyTime(0.0)
    if throttle_rate:
        copy = _copy_seconds(
            moves=moves,
            throttle_rate=throttle_rate,
            rates=partition_write_rates(cluster=cluster) if rates is None else rates,
        )
        if copy.seconds is None:
            return copy
        last = _last_run(cluster=cluster, throttled=True)
        return CopyTime(copy.seconds + (last["overhead"] if last is not None else 0.0))
    # Unthrottled, nothing but the machines limit the copy: the last unthrottled run's
    # pace over everything it copied, its overhead included.
    last = _last_run(cluster=cluster, throttled=False)
    if last is None or last["bytes"] <= 0:
        return CopyTime(None)
    return CopyTime(sum(m.bytes for m in moves) / (last["bytes"] / last["seconds"]))


def bytes_forecast(
    *,
    cluster: Cluster,
    moves: Sequence[MoveSized],
    seconds: float | None,
    rates: dict[tuple[str, int], float] | None = None,
) -> int:
    """Bytes the copy moves: what the logs hold now, plus what is written to the moved
    partitions while their new replicas catch up (they copy that too), at the newest
    measured window's rates for the expected `seconds`; and the bytes copied between
    the dirs of a broker (JBOD)."""
    total = sum(m.bytes + m.bytes_dirs for m in moves)
    if not seconds:
        return total
    if rates is None:
        rates = partition_write_rates(cluster=cluster)
    written = sum(rates.get((m.topic, m.partition), 0.0) * len(m.added) for m in moves)
    return total + int(written * seconds)


def plan_estimate(
    *,
    plan: Plan,
    kafka: KafkaOps | None = None,
    throttle_rate: int | None = None,
    sizes: ReplicaSizes | None = None,
    moves: list[PlanMove] | None = None,
) -> Plan:
    """Re-estimate `plan` from its replicas' log sizes now: `sizes` if the caller read
    them (the executor's start does), else one DescribeLogDirs per broker. An
    unreachable cluster keeps the earlier estimate. Sets (and saves) each move's bytes."""
    moves = list(plan.moves.all()) if moves is None else moves
    if sizes is None:
        try:
            sizes = kafka_ops_resolve(cluster=plan.cluster, kafka=kafka).replica_sizes()
        except KafkaOpError as exc:
            logger.warning("plan #%s not re-estimated: %s", plan.pk, exc)
            return plan
    move_bytes_from_logs(moves=moves, sizes=sizes)
    if throttle_rate is None:
        chosen = Execution.objects.filter(plan=plan).values_list("throttle_rate", flat=True)
        throttle_rate = chosen.first()
    if throttle_rate is None:
        throttle_rate = policy_get(cluster=plan.cluster).throttle_bytes_per_sec
    plan.bytes_estimated_at = timezone.now()
    rates = partition_write_rates(cluster=plan.cluster)
    copy = duration_estimate(
        cluster=plan.cluster, moves=moves, throttle_rate=throttle_rate, rates=rates
    )
    plan.duration_estimate_seconds, plan.estimate_note = copy.seconds, copy.note
    plan.bytes_to_move = bytes_forecast(
        cluster=plan.cluster, moves=moves, seconds=copy.seconds, rates=rates
    )
    with transaction.atomic():
        PlanMove.objects.bulk_update(moves, ["bytes", "bytes_dirs"])
        plan.save(update_fields=ESTIMATE_FIELDS)
    return plan


# The plan's fields an estimate writes.
ESTIMATE_FIELDS = [
    "bytes_to_move",
    "bytes_estimated_at",
    "duration_estimate_seconds",
    "estimate_note",
]


@dataclass(frozen=True)
class _Remaining:
    """What is left of a move: its bytes not copied yet."""

    topic: str
    partition: int
    replicas_before: list[int]
    bytes: int
    bytes_dirs: int
    added: list[int]


def plan_reestimate_remaining(*, plan: Plan, execution: Execution) -> CopyTime:
    """A running plan re-estimated at its execution's throttle now (the operator just
    changed it, or the caps): the rest of the copy from what is not copied yet, the
    copy time as the time run so far plus that, the bytes as copied so far plus the
    rest and its writes. Saves the plan's estimate and the execution's ETA (the
    smoothed rate starts again: the old one was made at the old throttle). Database
    reads only: callable in the transaction that records the change."""
    moves = list(plan.moves.all())
    left = [
        _Remaining(
            topic=m.topic,
            partition=m.partition,
            replicas_before=list(m.replicas_before),
            # bytes_done counts both copies: taken off the network's bytes first.
            bytes=max(m.bytes - m.bytes_done, 0),
            bytes_dirs=max(m.bytes + m.bytes_dirs - m.bytes_done, 0)
            - max(m.bytes - m.bytes_done, 0),
            added=m.added,
        )
        for m in moves
        if m.state in (MoveState.PENDING, MoveState.IN_PROGRESS)
    ]
    throttle = execution.throttle_rate
    if throttle is None:
        throttle = policy_get(cluster=plan.cluster).throttle_bytes_per_sec
    rates = partition_write_rates(cluster=plan.cluster)
    copy = duration_estimate(cluster=plan.cluster, moves=left, throttle_rate=throttle, rates=rates)
    done = sum(m.bytes_done for m in moves)
    plan.bytes_to_move = done + bytes_forecast(
        cluster=plan.cluster, moves=left, seconds=copy.seconds, rates=rates
    )
    plan.bytes_estimated_at = timezone.now()
    elapsed = (
        (timezone.now() - plan.started_at).total_seconds() if plan.started_at is not None else 0.0
    )
    plan.duration_estimate_seconds = None if copy.seconds is None else elapsed + copy.seconds
    plan.estimate_note = copy.note
    plan.save(update_fields=ESTIMATE_FIELDS)
    execution.eta_seconds = copy.seconds
    execution.rate_bytes_per_sec = None
    execution.bytes_total = max(plan.bytes_to_move, done)
    execution.save(update_fields=["eta_seconds", "rate_bytes_per_sec", "bytes_total", "updated_at"])
    return copy


def _copy_seconds(
    *, moves: Sequence[MoveSized], throttle_rate: float, rates: dict[tuple[str, int], float]
) -> CopyTime:
    """The slowest broker's copy time: each broker's bytes to send or receive over the
    throttle left once the moved partitions' writes (bytes/s, `rates`) are served; no
    time when a broker has bytes to copy and under CATCH_UP_MIN_SHARE of it left."""
    backlog: dict[tuple[str, int], int] = defaultdict(int)
    writes: dict[tuple[str, int], float] = defaultdict(float)
    for m in moves:
        added = m.added
        if not added:
            continue
        rate = rates.get((m.topic, m.partition), 0.0)
        for b in added:
            backlog[("in", b)] += m.bytes // len(added)
            writes[("in", b)] += rate
        if m.replicas_before:
            leader = m.replicas_before[0]
            backlog[("out", leader)] += m.bytes
            # Throttled fetches from the leader: its existing followers and the new ones.
            writes[("out", leader)] += rate * (len(m.replicas_before) - 1 + len(added))
    busy = [key for key, bytes_ in backlog.items() if bytes_ > 0]
    if not busy:
        return CopyTime(0.0)
    tightest = max(busy, key=lambda key: writes[key])
    if throttle_rate - writes[tightest] < throttle_rate * CATCH_UP_MIN_SHARE:
        side, broker = tightest
        verb = "receives" if side == "in" else "sends"
        return CopyTime(
            None,
            f"stalls at this throttle: broker {broker} {verb} {_mb(writes[tightest])}/s of "
            f"new writes for the moved partitions against a throttle of "
            f"{_mb(throttle_rate)}/s; raise the throttle",
        )
    return CopyTime(max(backlog[key] / (throttle_rate - writes[key]) for key in busy))


def _mb(rate: float) -> str:
    return f"{rate / 1e6:.1f} MB"


def partition_write_rates(*, cluster: Cluster) -> dict[tuple[str, int], float]:
    """Bytes/s written to each partition in the newest measured window ({} before any)."""
    window = partition_loads_latest(cluster=cluster, fields=("bytes_in",))
    return {key: rate for key, (rate,) in window.loads.items() if rate is not None}


def _last_run(*, cluster: Cluster, throttled: bool) -> dict | None:
    """The cluster's last completed run of the kind asked (throttled or not): its bytes
    copied, its seconds, and for a throttled one the overhead beyond copying at its
    throttle (as `_copy_seconds` times it, with today's write rates: what that model
    missed last time). An unthrottled run's pace says nothing of a throttled one's,
    nor the other way round."""
    recent = (
        Plan.objects.filter(cluster=cluster, state=PlanState.COMPLETED)
        .exclude(started_at=None)
        .exclude(finished_at=None)
        .select_related("execution")
        .order_by("-finished_at")[:LAST_RUNS_LOOKED_AT]
    )
    default_throttle = policy_get(cluster=cluster).throttle_bytes_per_sec
    for last in recent:
        execution = getattr(last, "execution", None)
        throttle = execution.throttle_rate if execution is not None else None
        if throttle is None:
            throttle = default_throttle
        if bool(throttle) != throttled:
            continue
        seconds = (last.finished_at - last.started_at).total_seconds()
        if seconds <= 0:
            return None
        moves = list(last.moves.all())
        copied = sum(m.bytes_copied or 0 for m in moves)
        overhead = 0.0
        if throttle:
            # The bytes it was timed with (read when it started), not what its new
            # replicas held at the end: retention may have deleted some meanwhile.
            copy = _copy_seconds(
                moves=moves, throttle_rate=throttle, rates=partition_write_rates(cluster=cluster)
            )
            overhead = max(seconds - copy.seconds, 0.0) if copy.seconds is not None else 0.0
        return {"bytes": copied, "seconds": seconds, "overhead": overhead}
    return None


# How far back the last run of a kind (throttled or not) is looked for.
LAST_RUNS_LOOKED_AT = 20
