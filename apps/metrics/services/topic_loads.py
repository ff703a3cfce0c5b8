"""A window's loads stored as one TopicLoad row per topic: its partitions' loads packed
(apps/metrics/window_packing.py) and its traffic summed per broker, for the heatmap's
traffic metrics, so a page never unpacks the window's partitions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from apps.clusters.models import Cluster
from apps.core.bulk_write import rows_insert

from ..models import TopicLoad
from ..window_packing import brokers_pack, loads_pack, loads_unpack
from .bulk_insert import ms_to_datetime, window_stamps_prepare, windows_stored

_COLUMNS = (
    "cluster",
    "topic",
    "window_start",
    "window_end",
    "network_in",
    "network_out",
    "brokers",
    "partitions",
    "partition_count",
)


def _broker_sums(rows: Sequence[Sequence]) -> tuple[dict[int, float], dict[int, float]]:
    """Per broker, as the load model does: bytes in on every replica; bytes out plus
    replication on the leader. `rows` in window_packing's LoadRow order."""
    into: dict[int, float] = {}
    out: dict[int, float] = {}
    for _, _, leader, replicas, _, bytes_in, bytes_out, _, _, _ in rows:
        bytes_in = bytes_in or 0.0
        replicas = replicas or ()
        for b in replicas:
            into[b] = into.get(b, 0.0) + bytes_in
        if leader is not None and leader >= 0:
            out[leader] = (
                out.get(leader, 0.0) + (bytes_out or 0.0) + bytes_in * max(len(replicas) - 1, 0)
            )
    return into, out


def _row(*, rows: list[tuple]) -> tuple:
    """(network_in, network_out, brokers, partitions, partition_count)."""
    into, out = _broker_sums(rows)
    return (
        sum(into.values()),
        sum(out.values()),
        brokers_pack(into=into, out=out),
        loads_pack(rows=rows),
        len(rows),
    )


def topic_loads_store(*, cluster: Cluster, loads: list[dict[str, Any]]) -> None:
    """Store `loads` (one per partition and window). A new window (the usual case) is
    inserted in bulk; a window stored again (a re-run after a crash) is merged per
    partition into its topic rows, so no partition's load already stored is lost."""
    # (window_start ms, topic) -> [window_end ms, rows in LoadRow order]
    grouped: dict[tuple[int, str], list] = {}
    for r in loads:
        key = (r["window_start"], r["topic"])
        acc = grouped.get(key)
        if acc is None:
            acc = grouped[key] = [r["window_end"], []]
        acc[1].append(
            (
                r["partition"],
                r["samples"],
                r["leader"],
                r["replicas"] or (),
                r["messages_in"],
                r["bytes_in"],
                r["bytes_out"],
                r["size"],
                r["avg_record_size"],
                r["consumer_groups"],
            )
        )
    again = windows_stored(model=TopicLoad, cluster_id=cluster.pk, starts={k[0] for k in grouped})
    if again:
        _topic_loads_merge(
            cluster=cluster, grouped={k: v for k, v in grouped.items() if k[0] in again}
        )
        grouped = {k: v for k, v in grouped.items() if k[0] not in again}
    if not grouped:
        return
    stamp = window_stamps_prepare(
        model=TopicLoad, ms={k[0] for k in grouped} | {v[0] for v in grouped.values()}
    )
    cluster_id = cluster.pk
    rows_insert(
        model=TopicLoad,
        columns=_COLUMNS,
        rows=[
            (cluster_id, topic, stamp[start], stamp[end], *_row(rows=rows))
            for (start, topic), (end, rows) in grouped.items()
        ],
    )


def _topic_loads_merge(*, cluster: Cluster, grouped: dict[tuple[int, str], list]) -> None:
    starts = {start: ms_to_datetime(start) for start, _ in grouped}
    stored = {
        (start, topic): packed
        for start, topic, packed in TopicLoad.objects.filter(
            cluster=cluster, window_start__in=list(starts.values())
        ).values_list("window_start", "topic", "partitions")
    }
    rows = []
    for (start, topic), (end, new) in grouped.items():
        merged = {r[0]: r for r in loads_unpack(packed=stored.get((starts[start], topic), b""))}
        merged.update((r[0], r) for r in new)
        network_in, network_out, brokers, partitions, count = _row(rows=list(merged.values()))
        rows.append(
            TopicLoad(
                cluster=cluster,
                topic=topic,
                window_start=starts[start],
                window_end=ms_to_datetime(end),
                network_in=network_in,
                network_out=network_out,
                brokers=brokers,
                partitions=partitions,
                partition_count=count,
            )
        )
    TopicLoad.objects.bulk_create(
        rows,
        batch_size=500,
        update_conflicts=True,
        unique_fields=["cluster", "window_start", "topic"],
        update_fields=[
            "window_end",
            "network_in",
            "network_out",
            "brokers",
            "partitions",
            "partition_count",
        ],
    )
