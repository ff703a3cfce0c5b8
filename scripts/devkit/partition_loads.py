"""Partition loads for tests: written through the metrics store (packed per topic and
window, merged into what a window already holds) and read back unpacked, one object
per partition with the fields the PartitionLoad rows had."""

from __future__ import annotations

from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any

from apps.clusters.models import Cluster
from apps.metrics.models import TopicLoad
from apps.metrics.services.topic_loads import topic_loads_store
from apps.metrics.window_packing import FIELDS, loads_unpack

_DEFAULTS: dict[str, Any] = {
    "samples": 6,
    "leader": None,
    "replicas": [],
    "messages_in": None,
    "bytes_in": None,
    "bytes_out": None,
    "size": None,
    "avg_record_size": None,
    "consumer_groups": 0,
}


def _ms(dt: datetime) -> int:
    return round(dt.timestamp() * 1000)


def partition_loads_write(*, cluster: Cluster, loads: list[dict[str, Any]]) -> None:
    """Each load: topic, partition, window_start (datetime), optionally window_end (a
    minute later by default) and any load field (defaults as PartitionLoad rows had
    them: no leader or replicas, nothing measured; 6 samples)."""
    rows = []
    for load in loads:
        start = load["window_start"]
        row = {**_DEFAULTS, **load}
        row["window_start"] = _ms(start)
        row["window_end"] = _ms(load.get("window_end") or start + timedelta(minutes=1))
        rows.append(row)
    topic_loads_store(cluster=cluster, loads=rows)


def partition_load_write(*, cluster: Cluster, **load: Any) -> None:
    partition_loads_write(cluster=cluster, loads=[load])


def partition_loads_read(
    *, cluster: Cluster | None = None, topic: str | None = None, window_start: Any = None
) -> list[SimpleNamespace]:
    """Stored partition loads (optionally of one cluster, topic, window), by window,
    topic and partition."""
    topics = TopicLoad.objects.order_by("window_start", "topic")
    if cluster is not None:
        topics = topics.filter(cluster=cluster)
    if topic is not None:
        topics = topics.filter(topic=topic)
    if window_start is not None:
        topics = topics.filter(window_start=window_start)
    return [
        SimpleNamespace(
            cluster_id=t.cluster_id,
            topic=t.topic,
            window_start=t.window_start,
            window_end=t.window_end,
            **dict(zip(FIELDS, row, strict=True)),
        )
        for t in topics
        for row in loads_unpack(packed=t.partitions)
    ]
