"""Per-topic load summaries of each stored window (TopicLoad), computed from the
window's partition loads as they are stored, for the heatmap's traffic metrics."""

from __future__ import annotations

import json
from typing import Any

from apps.clusters.models import Cluster

from ..models import TopicLoad
from .bulk_insert import ms_to_datetime, rows_insert, window_stamps_prepare, windows_stored

_COLUMNS = (
    "cluster",
    "topic",
    "window_start",
    "window_end",
    "network_in",
    "network_out",
    "brokers_in",
    "brokers_out",
)


def topic_loads_store(*, cluster: Cluster, loads: list[dict[str, Any]]) -> None:
    """Sum `loads` (one per partition and window) per topic and broker as the load model
    does: bytes in on every replica; bytes out plus replication on the leader. A new
    window is inserted in bulk; a window stored again (a re-run) has its rows rewritten."""
    # (window_start ms, topic) -> [window_end ms, {broker: in}, {broker: out}]
    sums: dict[tuple[int, str], list] = {}
    for r in loads:
        key = (r["window_start"], r["topic"])
        acc = sums.get(key)
        if acc is None:
            acc = sums[key] = [r["window_end"], {}, {}]
        bytes_in = r["bytes_in"] or 0.0
        replicas = r["replicas"] or ()
        into = acc[1]
        for b in replicas:
            into[b] = into.get(b, 0.0) + bytes_in
        leader = r["leader"]
        if leader is not None and leader >= 0:
            out = acc[2]
            out[leader] = (
                out.get(leader, 0.0)
                + (r["bytes_out"] or 0.0)
                + bytes_in * max(len(replicas) - 1, 0)
            )
    again = windows_stored(model=TopicLoad, cluster_id=cluster.pk, starts={k[0] for k in sums})
    if again:
        _topic_loads_upsert(cluster=cluster, sums={k: v for k, v in sums.items() if k[0] in again})
        sums = {k: v for k, v in sums.items() if k[0] not in again}
    if not sums:
        return
    stamp = window_stamps_prepare(
        model=TopicLoad, ms={k[0] for k in sums} | {v[0] for v in sums.values()}
    )
    cluster_id = cluster.pk
    rows_insert(
        model=TopicLoad,
        columns=_COLUMNS,
        rows=[
            (
                cluster_id,
                topic,
                stamp[start],
                stamp[end],
                sum(into.values()),
                sum(out.values()),
                # JSON keys are strings: json.dumps turns the int broker ids into them.
                json.dumps(into),
                json.dumps(out),
            )
            for (start, topic), (end, into, out) in sums.items()
        ],
    )


def _topic_loads_upsert(*, cluster: Cluster, sums: dict[tuple[int, str], list]) -> None:
    rows = [
        TopicLoad(
            cluster=cluster,
            topic=topic,
            window_start=ms_to_datetime(start),
            window_end=ms_to_datetime(end),
            network_in=sum(into.values()),
            network_out=sum(out.values()),
            brokers_in={str(b): v for b, v in into.items()},
            brokers_out={str(b): v for b, v in out.items()},
        )
        for (start, topic), (end, into, out) in sums.items()
    ]
    TopicLoad.objects.bulk_create(
        rows,
        batch_size=500,
        update_conflicts=True,
        unique_fields=["cluster", "window_start", "topic"],
        update_fields=["window_end", "network_in", "network_out", "brokers_in", "brokers_out"],
    )
