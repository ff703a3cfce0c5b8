"""Storing one run's results in one transaction: its windows (rewritten), the cursor
that says where the next run reads, and the figures recorded on the run.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from apps.clusters.models import Cluster

from ..models import AggregationRun, BrokerLoad, MetricsCursor
from ..signals import loads_stored
from .bulk_insert import ms_to_datetime
from .retention import metrics_windows_prune
from .topic_loads import topic_loads_store


def _one_per_window(loads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One load per partition and window, the one with most samples.

    Two only appear when the metrics topic gained partitions mid-window, which
    splits one partition's samples over two Kafka partitions.
    """
    if len({(r["topic"], r["partition"], r["window_start"]) for r in loads}) == len(loads):
        return loads  # the usual case, checked for less than the loop below costs
    best: dict[tuple[str, int, int], dict[str, Any]] = {}
    for r in loads:
        key = (r["topic"], r["partition"], r["window_start"])
        if key not in best or r["samples"] > best[key]["samples"]:
            best[key] = r
    return list(best.values())


def _broker_facts(
    loads: list[dict[str, Any]],
) -> tuple[dict[tuple[int, int], float], set[int]]:
    """In one pass over the partition loads, what the broker rows carry:

    - (window start ms, broker) -> messages in of the partitions it led; a broker that
      led only unmeasured partitions reads 0, one that led none is absent;
    - the window starts (ms) with partition loads none of which could be measured (the
      first window collected has one sample, so no rate): a gap in the charts.
    """
    led: dict[tuple[int, int], float] = {}
    starts, measured = set(), set()
    for r in loads:
        start = r["window_start"]
        starts.add(start)
        if r["bytes_in"] is not None:
            measured.add(start)
        leader = r["leader"]
        if leader is not None:
            key = (start, leader)
            led[key] = led.get(key, 0.0) + (r["messages_in"] or 0.0)
    return led, starts - measured


def aggregation_results_store(
    *, cluster: Cluster, run: AggregationRun, topic: str, result: Any
) -> None:
    """Write windows, advance the cursor and prune, all in one transaction; then
    `loads_stored` (from inside it, so receivers defer to its commit)."""
    partition_loads = _one_per_window(result.partition_loads)
    led, unmeasured = _broker_facts(partition_loads)
    broker_rows = [
        BrokerLoad(
            cluster=cluster,
            broker_id=r["broker"],
            window_start=ms_to_datetime(r["window_start"]),
            window_end=ms_to_datetime(r["window_end"]),
            network_in=r["network_in"],
            network_out=r["network_out"],
            disk=r["disk"],
            replicas=r["replicas"],
            leaders=r["leaders"],
            messages_in=led.get((r["window_start"], r["broker"])),
            measured=r["window_start"] not in unmeasured,
        )
        for r in result.broker_loads
    ]
    with transaction.atomic():
        topic_loads_store(cluster=cluster, loads=partition_loads)
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
                "messages_in",
                "measured",
            ],
        )
        cursor, _ = MetricsCursor.objects.select_for_update().get_or_create(
            cluster=cluster, defaults={"topic": topic}
        )
        if cursor.topic != topic:
            cursor.topic, cursor.offsets = topic, {}
        cursor.offsets = {**cursor.offsets, **{str(p): o for p, o in result.next_offsets.items()}}
        if result.finalized_until_ms is not None:
            cursor.finalized_until = ms_to_datetime(result.finalized_until_ms)
        cursor.save()
        metrics_windows_prune(cluster=cluster)
        starts = {ms_to_datetime(ms) for ms in {r["window_start"] for r in partition_loads}}
        starts |= {r.window_start for r in broker_rows}
        if starts:
            loads_stored.send_robust(sender=Cluster, cluster=cluster, window_start=max(starts))
    run.input_rows = result.input_rows
    run.output_rows = len(partition_loads)
    run.broker_rows = len(broker_rows)
    run.malformed_rows = result.malformed_rows
    run.late_rows = result.late_rows
    run.windows = sorted(s.isoformat() for s in starts)
