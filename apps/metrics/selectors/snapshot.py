"""The cluster as the planner reads it: synced placement with the newest window's loads."""

from __future__ import annotations

from datetime import UTC, datetime

from django.utils import timezone

from apps.balancer.engine import (
    ClusterSnapshot,
    SnapshotBroker,
    SnapshotPartition,
    SnapshotWindow,
)
from apps.balancer.engine.snapshot_input import LOAD_KEYS
from apps.clusters.models import Broker, Cluster, Partition, Topic
from apps.clusters.placement import placement_unpack

from .windows import partition_loads_latest


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _broker_entry(broker: Broker) -> SnapshotBroker:
    capacity = {
        key: value
        for key, value in (
            ("network_in", broker.capacity_network_in),
            ("network_out", broker.capacity_network_out),
            ("disk", broker.capacity_disk),
        )
        if value is not None
    }
    # A resource left out is unbounded (BALANCING.md §1).
    return SnapshotBroker(
        id=broker.node_id, rack=broker.rack or None, alive=broker.alive, capacity=capacity
    )


def _placement_read(*, cluster: Cluster) -> list[tuple[str, int, int | None, list[int]]]:
    """(topic, index, leader, replicas), sorted: from each topic's packed placement (no
    partition row read, no JSON decoded), or its partition rows where no digest vouches
    for the packed value (a writer other than the sync)."""
    placed = []
    unpacked: dict[int, str] = {}
    # Sorted here, not by the database: its collation may order names otherwise.
    for name, pk, digest, packed in sorted(
        (name, pk, digest, packed)
        for pk, name, digest, packed in Topic.objects.filter(cluster=cluster).values_list(
            "pk", "name", "placement_digest", "placement"
        )
    ):
        if not digest:
            unpacked[pk] = name
            continue
        placed += [(name, i, leader, r) for i, leader, r, _ in placement_unpack(packed=packed)]
    if unpacked:
        placed += [
            (unpacked[topic_id], index, leader, replicas)
            for topic_id, index, leader, replicas in Partition.objects.filter(
                topic_id__in=list(unpacked)
            ).values_list("topic_id", "index", "leader", "replicas")
        ]
        placed.sort()
    return placed


def cluster_snapshot_build(*, cluster: Cluster, now: datetime | None = None) -> ClusterSnapshot:
    """The cluster as the planner reads it (BALANCING.md §1).

    Placement (replicas, leader) is the last synced state of the cluster; loads are
    the latest complete window's, absent for partitions it did not measure.
    """
    # Plain tuples, not model instances: instances cost far more at 200k partitions.
    window = partition_loads_latest(cluster=cluster, fields=LOAD_KEYS)
    loads = window.loads
    partitions = []
    for topic, index, leader, replicas in _placement_read(cluster=cluster):
        measured = loads.get((topic, index))
        load = None
        if measured is None:
            pass
        elif None not in measured:  # the usual case, without a comprehension per partition
            load = dict(zip(LOAD_KEYS, measured, strict=True))
        else:
            # Unmeasured (null) figures are left out: missing means zero.
            load = {k: v for k, v in zip(LOAD_KEYS, measured, strict=True) if v is not None}
        partitions.append(
            SnapshotPartition(
                topic=topic,
                partition=index,
                replicas=replicas,
                leader=leader if leader is not None and leader in replicas else -1,
                load=load,
            )
        )
    measured_window = None
    if loads and window.start is not None and window.end is not None:
        measured_window = SnapshotWindow(start=_iso(window.start), end=_iso(window.end))
    return ClusterSnapshot(
        cluster=cluster.name,
        taken_at=_iso(now or timezone.now()),
        brokers=[_broker_entry(b) for b in cluster.brokers.order_by("node_id")],
        partitions=partitions,
        window=measured_window,
    )
