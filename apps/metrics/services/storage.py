"""Storing one run's results in one transaction: its windows (upserted), the cursor
that says where the next run reads, and the figures recorded on the run.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.db import transaction

from apps.clusters.models import Cluster

from ..models import AggregationRun, BrokerLoad, MetricsCursor, PartitionLoad
from ..signals import loads_stored
from .retention import metrics_windows_prune


def _ms_to_dt(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def _one_per_window(loads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One load per partition and window, the one with most samples.

    Two only appear when the metrics topic gained partitions mid-window, which
    splits one partition's samples over two Kafka partitions.
    """
    best: dict[tuple[str, int, int], dict[str, Any]] = {}
    for r in loads:
        key = (r["topic"], r["partition"], r["window_start"])
        if key not in best or r["samples"] > best[key]["samples"]:
            best[key] = r
    return list(best.values())


def aggregation_results_store(
    *, cluster: Cluster, run: AggregationRun, topic: str, result: Any
) -> None:
    """Write windows, advance the cursor and prune, all in one transaction; then
    `loads_stored` (from inside it, so receivers defer to its commit)."""
    partition_rows = [
        PartitionLoad(
            cluster=cluster,
            topic=r["topic"],
            partition=r["partition"],
            window_start=_ms_to_dt(r["window_start"]),
            window_end=_ms_to_dt(r["window_end"]),
            samples=r["samples"],
            leader=r["leader"],
            replicas=r["replicas"] or [],
            messages_in=r["messages_in"],
            bytes_in=r["bytes_in"],
            bytes_out=r["bytes_out"],
            size=r["size"],
            avg_record_size=r["avg_record_size"],
            consumer_groups=r["consumer_groups"],
        )
        for r in _one_per_window(result.partition_loads)
    ]
    broker_rows = [
        BrokerLoad(
            cluster=cluster,
            broker_id=r["broker"],
            window_start=_ms_to_dt(r["window_start"]),
            window_end=_ms_to_dt(r["window_end"]),
            network_in=r["network_in"],
            network_out=r["network_out"],
            disk=r["disk"],
            replicas=r["replicas"],
            leaders=r["leaders"],
            topic_replicas=r["topic_replicas"] or {},
        )
        for r in result.broker_loads
    ]
    with transaction.atomic():
        # A window is written once; re-running after a crash rewrites the same rows.
        PartitionLoad.objects.bulk_create(
            partition_rows,
            batch_size=2000,
            update_conflicts=True,
            unique_fields=["cluster", "window_start", "topic", "partition"],
            update_fields=[
                "window_end",
                "samples",
                "leader",
                "replicas",
                "messages_in",
                "bytes_in",
                "bytes_out",
                "size",
                "avg_record_size",
                "consumer_groups",
            ],
        )
        BrokerLoad.objects.bulk_create(
            broker_rows,
            batch_size=2000,
            update_conflicts=True,
            unique_fields=["cluster", "window_start", "broker_id"],
            update_fields=[
                "window_end",
                "network_in",
                "network_out",
                "disk",
                "replicas",
                "leaders",
                "topic_replicas",
            ],
        )
        cursor, _ = MetricsCursor.objects.select_for_update().get_or_create(
            cluster=cluster, defaults={"topic": topic}
        )
        if cursor.topic != topic:
            cursor.topic, cursor.offsets = topic, {}
        cursor.offsets = {**cursor.offsets, **{str(p): o for p, o in result.next_offsets.items()}}
        if result.finalized_until_ms is not None:
            cursor.finalized_until = _ms_to_dt(result.finalized_until_ms)
        cursor.save()
        metrics_windows_prune(cluster=cluster)
        if partition_rows or broker_rows:
            newest = max(r.window_start for r in [*partition_rows, *broker_rows])
            loads_stored.send_robust(sender=Cluster, cluster=cluster, window_start=newest)
    run.input_rows = result.input_rows
    run.output_rows = len(partition_rows)
    run.broker_rows = len(broker_rows)
    run.malformed_rows = result.malformed_rows
    run.late_rows = result.late_rows
    run.windows = sorted(
        {r.window_start.isoformat() for r in broker_rows}
        | {r.window_start.isoformat() for r in partition_rows}
    )
