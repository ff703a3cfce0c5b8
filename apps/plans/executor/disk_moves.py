"""Moves of replicas between the log dirs of one broker (JBOD), as kafka-reassign-
partitions.sh makes them: AlterReplicaLogDirs names each replica's target dir before
AlterPartitionReassignments creates any new replica, and is re-sent for a replica its
broker cannot place yet (REPLICA_NOT_AVAILABLE) until the broker hosts it.

A move is done when DescribeLogDirs shows the replica in its target dir (the future
replica is then gone: Kafka swaps it in at the end of the copy). Kafka cannot abort a
move, only be sent another one back to the source dir.
"""

from collections import Counter
from collections.abc import Mapping

from ..kafka_ops import KafkaOps, PartitionKey
from ..models import PlanMove

ReplicaKey = tuple[str, int, int]  # (topic, partition, broker_id)

# The broker config that caps the bytes/s of every move between its dirs.
DISK_THROTTLE_KEY = "replica.alter.log.dirs.io.max.bytes.per.second"

# Kafka's answer for a replica its broker does not host yet: send the target again.
NOT_PLACED_YET = {"ReplicaNotAvailableError", "REPLICA_NOT_AVAILABLE"}


def disk_moves_pick(
    *,
    pending: Mapping[ReplicaKey, str],
    busy: set[ReplicaKey],
    per_broker: int,
    broker_by_broker: bool = False,
) -> dict[ReplicaKey, str]:
    """The pending moves to start now, in `pending`'s order: at most `per_broker` moves
    (busy ones included) on each broker, and with `broker_by_broker` only on one broker
    at a time (the busy one, else the first with a pending move)."""
    if per_broker < 1:
        raise ValueError("per_broker must be at least 1")
    load = Counter(broker for _topic, _partition, broker in busy)
    allowed: set[int] | None = None
    if broker_by_broker:
        if load:
            allowed = set(load)
        else:
            first = next(iter(pending), None)
            allowed = set() if first is None else {first[2]}
    picked: dict[ReplicaKey, str] = {}
    for replica, path in pending.items():
        broker = replica[2]
        if replica in busy or (allowed is not None and broker not in allowed):
            continue
        if load[broker] >= per_broker:
            continue
        load[broker] += 1
        picked[replica] = path
    return picked


def disk_moves_send(
    *, kafka: KafkaOps, targets: Mapping[ReplicaKey, str]
) -> tuple[set[ReplicaKey], dict[ReplicaKey, str]]:
    """Send the targets; returns (to re-send: not placed yet, refused: error name)."""
    answered = kafka.replica_log_dirs_alter(dict(targets))
    retry = {replica for replica, error in answered.items() if error in NOT_PLACED_YET}
    refused = {
        replica: error
        for replica, error in answered.items()
        if error is not None and error not in NOT_PLACED_YET
    }
    return retry, refused


def disk_moves_done(*, kafka: KafkaOps, targets: Mapping[ReplicaKey, str]) -> set[ReplicaKey]:
    """The replicas DescribeLogDirs reports in their target dir."""
    where = kafka.replica_log_dirs()
    return {replica for replica, path in targets.items() if where.get(replica) == path}


def disk_copies_to_stop(
    moves: list[PlanMove], cancelled: set[PartitionKey]
) -> dict[ReplicaKey, str]:
    """The dir targets of `moves` to stop: all but those of new replicas whose
    reassignment is being cancelled (Kafka deletes those replicas)."""
    return {
        replica: path
        for m in moves
        for replica, path in m.disk_targets.items()
        if not (m.key in cancelled and replica[2] in m.added)
    }


def disk_copies_revert(
    *, kafka: KafkaOps, targets: Mapping[ReplicaKey, str]
) -> dict[ReplicaKey, str]:
    """Stop the copies to `targets` not done yet: each such replica is sent to the dir
    DescribeLogDirs reports it in (its source; AlterReplicaLogDirs to the dir a replica
    is in drops its future replica). Returns what was sent; a replica Kafka reports in
    no dir is left alone."""
    if not targets:
        return {}
    where = kafka.replica_log_dirs()
    back = {
        replica: where[replica]
        for replica, path in targets.items()
        if replica in where and where[replica] != path
    }
    if back:
        kafka.replica_log_dirs_alter(back)
    return back


def disk_throttle_configs(
    *, brokers: set[int], rate: int | None
) -> dict[int, dict[str, str | None]]:
    """Broker config writes that set (rate) or delete (None) the disk-move throttle."""
    value = None if rate is None else str(int(rate))
    return {broker: {DISK_THROTTLE_KEY: value} for broker in sorted(brokers)}
