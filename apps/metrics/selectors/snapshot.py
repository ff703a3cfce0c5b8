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
from apps.clusters.replica_dirs import replica_dirs_unpack

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
    log_dirs = None
    if broker.log_dirs is not None:
        keys = ("path", "total", "usable", "online")
        log_dirs = [{key: d[key] for key in keys} for d in broker.log_dirs]
    return SnapshotBroker(
        id=broker.node_id,
        rack=broker.rack or None,
        alive=broker.alive,
        capacity=capacity,
        log_dirs=log_dirs,
    )


Placed = tuple[str, int, int | None, list[int], list[str | None] | None]


def _dir_paths(
    replicas: list[int], dirs: list[int], paths: dict[int, list[str]]
) -> list[str | None] | None:
    """The path of each replica's dir (None where unknown); None when none is known."""
    named = [
        paths[b][k] if 0 <= k < len(paths.get(b, ())) else None
        for b, k in zip(replicas, dirs, strict=True)
    ]
    return named if any(named) else None


def _placement_read(*, cluster: Cluster, paths: dict[int, list[str]]) -> list[Placed]:
    """(topic, index, leader, replicas, replica dir paths or None), sorted: from each
    topic's packed placement and replica dirs (no partition row read, no JSON decoded),
    or its partition rows where no digest vouches for the packed value (a writer other
    than the sync; their dirs are not known). `paths`: each broker's log dir paths."""
    placed: list[Placed] = []
    unpacked: dict[int, str] = {}
    # Sorted here, not by the database: its collation may order names otherwise.
    for name, pk, digest, packed, on_dirs in sorted(
        (name, pk, digest, packed, on_dirs)
        for pk, name, digest, packed, on_dirs in Topic.objects.filter(cluster=cluster).values_list(
            "pk", "name", "placement_digest", "placement", "replica_dirs"
        )
    ):
        if not digest:
            unpacked[pk] = name
            continue
        rows = list(placement_unpack(packed=packed))
        dirs = None
        if on_dirs is not None and paths:
            dirs = replica_dirs_unpack(packed=on_dirs, replica_counts=[len(r[2]) for r in rows])
        if dirs is None:
            placed += [(name, i, leader, r, None) for i, leader, r, _ in rows]
        else:
            placed += [
                (name, i, leader, r, _dir_paths(r, d, paths))
                for (i, leader, r, _), d in zip(rows, dirs, strict=True)
            ]
    if unpacked:
        placed += [
            (unpacked[topic_id], index, leader, replicas, None)
            for topic_id, index, leader, replicas in Partition.objects.filter(
                topic_id__in=list(unpacked)
            ).values_list("topic_id", "index", "leader", "replicas")
        ]
        placed.sort(key=lambda row: row[:2])
    return placed


def cluster_snapshot_build(*, cluster: Cluster, now: datetime | None = None) -> ClusterSnapshot:
    """The cluster as the planner reads it (BALANCING.md §1).

    Placement (replicas, leader) is the last synced state of the cluster; loads are
    the latest complete window's, absent for partitions it did not measure.
    """
    # Plain tuples, not model instances: instances cost far more at 200k partitions.
    window = partition_loads_latest(cluster=cluster, fields=LOAD_KEYS)
    loads = window.loads
    brokers = list(cluster.brokers.order_by("node_id"))
    paths = {b.node_id: [d["path"] for d in b.log_dirs] for b in brokers if b.log_dirs}
    partitions = []
    for topic, index, leader, replicas, on_dirs in _placement_read(cluster=cluster, paths=paths):
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
                log_dirs=on_dirs,
            )
        )
    measured_window = None
    if loads and window.start is not None and window.end is not None:
        measured_window = SnapshotWindow(start=_iso(window.start), end=_iso(window.end))
    return ClusterSnapshot(
        cluster=cluster.name,
        taken_at=_iso(now or timezone.now()),
        brokers=[_broker_entry(b) for b in brokers],
        partitions=partitions,
        window=measured_window,
    )
