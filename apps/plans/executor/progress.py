"""An execution's progress: bytes copied so far (replica sizes on the receiving
brokers, and for a copy between the dirs of one broker (JBOD) its future replica's
size), a smoothed rate and an ETA, announced with the `execution_progressed` signal
at every poll.

A move's `bytes_done` never goes back: retention shrinks replicas while they copy, and
a count that follows their sizes down would make the bar run backwards. A finished
move counts at least its estimate, or what its new replicas measured if more (they
copied the writes made meanwhile too). The plan's copied bytes are their sum, on the
progress bar and beside the estimate alike."""

import logging

from django.utils import timezone

from ..kafka_ops import KafkaOpError, KafkaOps, PartitionInfo, PartitionKey
from ..models import Execution, MoveState, Plan, PlanMove
from ..signals import execution_progressed

logger = logging.getLogger(__name__)


def replica_sizes_get(*, kafka: KafkaOps) -> dict[tuple[str, int, int], int] | None:
    """Size of every replica, by (topic, partition, broker); None if Kafka can't tell
    now (progress and byte counts are then left as they are)."""
    try:
        return kafka.replica_sizes()
    except KafkaOpError as exc:
        logger.warning("replica sizes unavailable: %s", exc)
        return None


def future_sizes_get(*, kafka: KafkaOps) -> dict[tuple[str, int, int], int]:
    """Size of every future replica (copies between dirs in progress); none known if
    Kafka can't tell now (such copies then count what they had)."""
    try:
        return kafka.replica_future_sizes()
    except KafkaOpError as exc:
        logger.warning("future replica sizes unavailable: %s", exc)
        return {}


def moves_copied_record(*, moves: list[PlanMove], kafka: KafkaOps) -> None:
    """For moves just done: what their new replicas and the replicas they moved between
    dirs hold now, the bytes really copied (shown beside the estimate). One
    DescribeLogDirs per step that finishes moves; if Kafka can't tell, the executor's
    count stands in."""
    finished = [m for m in moves if m.state == MoveState.DONE and m.bytes_copied is None]
    if not finished:
        return
    measured = any(m.added or m.dir_copies for m in finished)
    sizes = replica_sizes_get(kafka=kafka) if measured else {}
    for m in finished:
        if sizes is None:
            m.bytes_copied = m.bytes + m.bytes_dirs
        else:
            m.bytes_copied = sum(sizes.get((m.topic, m.partition, b), 0) for b in m.added) + sum(
                sizes.get(replica, 0) for replica in m.dir_copies
            )
        m.bytes_done = max(m.bytes_done, m.bytes_copied)
    PlanMove.objects.bulk_update(finished, ["bytes_copied", "bytes_done"])


def progress_update(
    *,
    plan: Plan,
    execution: Execution,
    moves: list[PlanMove],
    current: dict[PartitionKey, PartitionInfo],
    kafka: KafkaOps,
    disk_where: dict[tuple[str, int, int], str] | None = None,
) -> None:
    """Bytes copied so far (replica sizes on the receiving brokers, future replicas'
    sizes for copies between dirs), rate and ETA. `disk_where`: the dir of each replica
    now, when a move names dirs."""
    running = [m for m in moves if m.state == MoveState.IN_PROGRESS and (m.bytes or m.bytes_dirs)]
    sizes = replica_sizes_get(kafka=kafka) if running else {}
    if sizes is None:
        return
    copying = any(m.bytes_dirs for m in running)
    futures = future_sizes_get(kafka=kafka) if copying else {}
    now = timezone.now()
    for m in running:
        source = max(
            (sizes.get((m.topic, m.partition, b), 0) for b in m.replicas_before), default=0
        )
        copied = sum(min(sizes.get((m.topic, m.partition, b), 0), source) for b in m.added)
        for replica, path in m.dir_copies.items():
            size = sizes.get(replica, 0)
            # Done: the replica is in its dir; else its copy there as far as it has got.
            done = (disk_where or {}).get(replica) == path
            copied += size if done else min(futures.get(replica, 0), size)
        if copied > m.bytes_done:
            m.progressed_at = now  # restarts the stall clock (doomed.py)
            m.bytes_done = copied
    if running:
        PlanMove.objects.bulk_update(running, ["bytes_done", "progressed_at"])
    done = sum(m.bytes_done for m in moves)
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
