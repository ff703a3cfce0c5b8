"""The cluster as the planner reads it: synced placement with the newest window's loads."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.utils import timezone

from apps.clusters.models import Broker, Cluster, Partition

from .windows import partition_loads_latest


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _broker_entry(broker: Broker) -> dict[str, Any]:
    capacity = {
        key: value
        for key, value in (
            ("network_in", broker.capacity_network_in),
            ("network_out", broker.capacity_network_out),
            ("disk", broker.capacity_disk),
        )
        if value is not None
    }
    entry: dict[str, Any] = {
        "id": broker.node_id,
        "rack": broker.rack or None,
        "alive": broker.alive,
    }
    if capacity:
        # A resource left out is unbounded (BALANCING.md §1).
        entry["capacity"] = capacity
    return entry


def cluster_snapshot_build(*, cluster: Cluster, now: datetime | None = None) -> dict[str, Any]:
    """The cluster as the planner reads it (BALANCING.md §1).

    Placement (replicas, leader) is the last synced state of the cluster; loads are
    the latest complete window's, absent for partitions it did not measure.
    """
    loads = {
        (pl.topic, pl.partition): pl
        for pl in partition_loads_latest(cluster=cluster).only(
            "topic",
            "partition",
            "window_start",
            "window_end",
            "bytes_in",
            "bytes_out",
            "messages_in",
            "size",
        )
    }
    partitions = []
    for p in (
        Partition.objects.filter(topic__cluster=cluster)
        .select_related("topic")
        .order_by("topic__name", "index")
    ):
        leader = p.leader if p.leader is not None and p.leader in p.replicas else -1
        entry: dict[str, Any] = {
            "topic": p.topic.name,
            "partition": p.index,
            "replicas": list(p.replicas),
            "leader": leader,
        }
        measured = loads.get((p.topic.name, p.index))
        if measured is not None:
            load = {
                "bytes_in": measured.bytes_in,
                "bytes_out": measured.bytes_out,
                "messages_in": measured.messages_in,
                "size": measured.size,
            }
            # Unmeasured (null) figures are left out: missing means zero.
            entry["load"] = {k: v for k, v in load.items() if v is not None}
        partitions.append(entry)
    snapshot: dict[str, Any] = {
        "cluster": cluster.name,
        "taken_at": _iso(now or timezone.now()),
        "brokers": [_broker_entry(b) for b in cluster.brokers.order_by("node_id")],
        "partitions": partitions,
    }
    if loads:
        any_load = next(iter(loads.values()))
        snapshot["window"] = {
            "start": _iso(any_load.window_start),
            "end": _iso(any_load.window_end),
        }
    return snapshot
