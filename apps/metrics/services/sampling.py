"""Sampling: one round reads every partition's offsets, replica sizes and consumer
progress from a cluster and publishes one record per partition to the metrics topic.

See docs/metrics.md for the record schema and the requests a round makes.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from django.conf import settings

from apps.clusters.models import Cluster
from apps.core.garbage_collection import garbage_collection_paused
from apps.kafka_layer.authorization import authorization_denied, missing_acl_text
from apps.kafka_layer.clients import AdminClient, admin_client_create
from apps.kafka_layer.group_offsets import committed_offsets_list
from apps.kafka_layer.log_offsets import log_offsets_list
from apps.kafka_layer.metrics_topic import metrics_topic_ensure
from apps.kafka_layer.partition_leaders import PartitionLeader, partitions_describe
from apps.kafka_layer.records_publish import records_publish

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SampleResult:
    ts_ms: int
    partitions: int
    records: int
    consumer_groups: int
    sizes_known: bool
    seconds: float
    # Why DescribeLogDirs failed this round (sizes then come from offsets), else "".
    sizes_error: str = ""


def replica_sizes_read(
    *, cluster: Cluster, errors: list[str] | None = None
) -> dict[int, dict[tuple[str, int], int]] | None:
    """{broker: {(topic, partition): size}}, or None when DescribeLogDirs failed (the job
    then uses offsets).

    Why it failed is appended to `errors`: the sample round warns once when that
    starts (sample_round), not every round.
    """
    from apps.kafka_layer.kafka_python_adapter import log_sizes_describe

    try:
        return log_sizes_describe(connection=cluster.connection)
    except Exception as exc:  # kafka-python raises many unrelated types
        logger.debug("describe_log_dirs on %s failed: %s", cluster.name, exc)
        if errors is not None:
            if authorization_denied(exc):
                errors.append(missing_acl_text(api="DescribeLogDirs"))
            else:
                errors.append(f"{exc.__class__.__name__}: {exc}".rstrip(": "))
        return None


def metric_records_build(
    *,
    ts_ms: int,
    partitions: list[PartitionLeader],
    start_offsets: dict[tuple[str, int], int],
    end_offsets: dict[tuple[str, int], int],
    sizes: dict[int, dict[tuple[str, int], int]] | None,
    committed: dict[tuple[str, int], dict[str, int]],
) -> list[tuple[bytes, bytes]]:
    """(key, value) per partition whose offsets are known, in the schema of metrics_schema.

    `sizes` is by broker (replica_sizes_read); None: no sizes in the records.
    """
    # metrics_schema imports pyspark: kept out of processes that import services only.
    from spark_jobs.metrics_schema import metric_records_encode

    no_groups: dict[str, int] = {}
    rows = []
    for p in partitions:
        tp = (p.topic, p.partition)
        start = start_offsets.get(tp)
        end = end_offsets.get(tp)
        if start is None or end is None:
            continue
        rows.append(
            (p.topic, p.partition, p.leader, p.replicas, start, end, committed.get(tp, no_groups))
        )
    return metric_records_encode(ts_ms=ts_ms, rows=rows, sizes=sizes or {})


def metrics_sample(*, cluster: Cluster, admin: AdminClient | None = None) -> SampleResult:
    """One sample round: read every partition's offsets, sizes and consumer progress and
    publish one record per partition to the metrics topic.

    The round is flushed before returning, so a record of a later round never
    becomes visible before one of this round (the aggregation relies on it).
    """
    started = time.monotonic()
    # a round makes a few objects per partition, none in a cycle (bench/bench_sample_round.py)
    with garbage_collection_paused():
        admin = admin or admin_client_create(connection=cluster.connection)
        topic = settings.METRICS_TOPIC
        partitions, existing, brokers = partitions_describe(admin=admin)
        metrics_topic_ensure(admin=admin, topic=topic, existing=existing, brokers=brokers)
        # One timestamp per round; the offsets are read first as they carry the rates.
        ts_ms = int(time.time() * 1000)
        start_offsets, end_offsets = log_offsets_list(admin=admin, partitions=partitions)
        sizes_errors: list[str] = []
        sizes = replica_sizes_read(cluster=cluster, errors=sizes_errors)
        committed = committed_offsets_list(admin=admin)
        records = metric_records_build(
            ts_ms=ts_ms,
            partitions=partitions,
            start_offsets=start_offsets,
            end_offsets=end_offsets,
            sizes=sizes,
            committed=committed,
        )
        records_publish(connection=cluster.connection, topic=topic, records=records)
        groups = {g for per_group in committed.values() for g in per_group}
        return SampleResult(
            ts_ms=ts_ms,
            partitions=len(partitions),
            records=len(records),
            consumer_groups=len(groups),
            sizes_known=sizes is not None,
            sizes_error="; ".join(sizes_errors),
            seconds=time.monotonic() - started,
        )
