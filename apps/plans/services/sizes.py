"""Sizes of partitions that no load window measured yet, read from Kafka at proposal time."""

import logging

from apps.clusters.models import Cluster

from ..kafka_ops import KafkaOpError, KafkaOps, PartitionKey, kafka_ops_resolve

logger = logging.getLogger(__name__)


def partition_sizes_measure(
    *, cluster: Cluster, keys: list[PartitionKey], kafka: KafkaOps | None = None
) -> dict[PartitionKey, int]:
    """Bytes on disk of each partition now: its largest replica's log (one
    DescribeLogDirs per broker). Partitions Kafka reports no replica of are left
    out; an unreachable cluster gives {} (the sizes stay unknown)."""
    if not keys:
        return {}
    try:
        replicas = kafka_ops_resolve(cluster=cluster, kafka=kafka).replica_sizes()
    except KafkaOpError as exc:
        logger.warning("sizes of new partitions of %s unknown: %s", cluster.name, exc)
        return {}
    wanted = set(keys)
    sizes: dict[PartitionKey, int] = {}
    for (topic, partition, _broker), size in replicas.items():
        key = (topic, partition)
        if key in wanted:
            sizes[key] = max(sizes.get(key, 0), int(size))
    return sizes
