"""Per-topic load summaries of each stored window (TopicLoad), computed from the
window's partition loads as they are stored, for the heatmap's traffic metrics."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from apps.clusters.models import Cluster

from ..models import TopicLoad


def topic_loads_store(*, cluster: Cluster, loads: list[dict[str, Any]]) -> None:
    """Sum `loads` (one per partition and window) per topic and broker as the load model
    does: bytes in on every replica; bytes out plus replication on the leader. A window
    stored again (a re-run) has its rows rewritten."""
    # (window_start ms, topic) -> [window_end ms, {broker: in}, {broker: out}]
    sums: dict[tuple[int, str], list] = {}
    for r in loads:
        key = (r["window_start"], r["topic"])
        acc = sums.get(key)
        if acc is None:
            acc = sums[key] = [r["window_end"], defaultdict(float), defaultdict(float)]
        bytes_in = r["bytes_in"] or 0.0
        replicas = r["replicas"] or []
        into = acc[1]
        for b in replicas:
            into[b] += bytes_in
        leader = r["leader"]
        if leader is not None and leader >= 0:
            acc[2][leader] += (r["bytes_out"] or 0.0) + bytes_in * max(len(replicas) - 1, 0)
    rows = [
        TopicLoad(
            cluster=cluster,
            topic=topic,
            window_start=_dt(start),
            window_end=_dt(end),
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


def _dt(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)
