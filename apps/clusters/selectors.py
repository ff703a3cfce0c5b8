"""Read-side queries for the cluster pages."""

from collections import Counter
from dataclasses import dataclass

from .models import Broker, Cluster, Partition, Topic


@dataclass(frozen=True)
class BrokerRow:
    broker: Broker
    replicas: int
    leaders: int
    replica_skew_pct: float | None
    leader_skew_pct: float | None


def _skew(value: int, mean: float) -> float | None:
    # As kafka-ui shows it: deviation from the mean over the live brokers, in percent.
    return None if mean == 0 else (value - mean) / mean * 100.0


def broker_rows_list(*, cluster: Cluster) -> list[BrokerRow]:
    replicas: Counter[int] = Counter()
    leaders: Counter[int] = Counter()
    for leader, replica_list in Partition.objects.filter(topic__cluster=cluster).values_list(
        "leader", "replicas"
    ):
        replicas.update(replica_list)
        if leader is not None:
            leaders[leader] += 1
    brokers = list(cluster.brokers.all())
    alive = [b for b in brokers if b.alive] or brokers
    mean_replicas = sum(replicas[b.node_id] for b in alive) / len(alive) if alive else 0.0
    mean_leaders = sum(leaders[b.node_id] for b in alive) / len(alive) if alive else 0.0
    return [
        BrokerRow(
            broker=b,
            replicas=replicas[b.node_id],
            leaders=leaders[b.node_id],
            replica_skew_pct=_skew(replicas[b.node_id], mean_replicas) if b.alive else None,
            leader_skew_pct=_skew(leaders[b.node_id], mean_leaders) if b.alive else None,
        )
        for b in brokers
    ]


@dataclass(frozen=True)
class TopicRow:
    topic: Topic
    partitions: int
    replication_factor: int
    offline: int
    under_replicated: int


def topic_rows_list(*, cluster: Cluster, include_internal: bool = True) -> list[TopicRow]:
    topics = cluster.topics.prefetch_related("partitions")
    if not include_internal:
        topics = topics.filter(internal=False)
    rows = []
    for topic in topics:
        parts = list(topic.partitions.all())
        rows.append(
            TopicRow(
                topic=topic,
                partitions=len(parts),
                replication_factor=max((len(p.replicas) for p in parts), default=0),
                offline=sum(p.offline for p in parts),
                under_replicated=sum(p.under_replicated for p in parts),
            )
        )
    return rows
