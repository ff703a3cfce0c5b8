"""Stored load windows (per partition, per broker): the newest, or a time range.

Partition loads are kept packed per topic and window (TopicLoad.partitions): readers
unpack only the topic rows they need."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import repeat
from typing import Any

from django.db.models import QuerySet

from apps.clusters.models import Cluster

from ..models import BrokerLoad, TopicLoad
from ..window_packing import loads_columns_unpack

# A partition load as the API gives it.
PARTITION_LOAD_FIELDS = (
    "samples",
    "leader",
    "replicas",
    "messages_in",
    "bytes_in",
    "bytes_out",
    "size",
)


def _newest_start(loads: QuerySet) -> datetime | None:
    return loads.order_by("-window_start").values_list("window_start", flat=True).first()


def _starting_between(loads: QuerySet, since: datetime | None, until: datetime | None) -> QuerySet:
    if since is not None:
        loads = loads.filter(window_start__gte=since)
    if until is not None:
        loads = loads.filter(window_start__lt=until)
    return loads


def latest_window_start(*, cluster: Cluster) -> datetime | None:
    """Start of the newest window written; only complete windows are ever written."""
    return _newest_start(TopicLoad.objects.filter(cluster=cluster))


@dataclass(frozen=True)
class WindowLoads:
    """The newest window's partition loads: (topic, partition) -> the asked fields'
    values; no bounds and no loads before any window is stored."""

    start: datetime | None
    end: datetime | None
    loads: dict[tuple[str, int], tuple]


def partition_loads_latest(*, cluster: Cluster, fields: Sequence[str]) -> WindowLoads:
    """Plain tuples, not model instances or dicts per partition (built by zip, not a
    Python loop): on a large cluster an object per partition is slow."""
    start = latest_window_start(cluster=cluster)
    if start is None:
        return WindowLoads(start=None, end=None, loads={})
    topics = TopicLoad.objects.filter(cluster=cluster, window_start=start).order_by()
    end = topics.values_list("window_end", flat=True).first()
    loads: dict[tuple[str, int], tuple] = {}
    for topic, packed in topics.values_list("topic", "partitions"):
        columns = loads_columns_unpack(packed=packed, fields=("partition", *fields))
        loads.update(
            zip(
                zip(repeat(topic), columns["partition"], strict=False),
                zip(*(columns[f] for f in fields), strict=True),
                strict=True,
            )
        )
    return WindowLoads(start=start, end=end, loads=loads)


def broker_loads_latest(*, cluster: Cluster) -> QuerySet[BrokerLoad]:
    """One row per broker: the newest broker window; none without metrics."""
    loads = BrokerLoad.objects.filter(cluster=cluster)
    start = _newest_start(loads)
    if start is None:
        return BrokerLoad.objects.none()
    return loads.filter(window_start=start)


def loads_broker_filter(
    *, cluster: Cluster, since: datetime | None = None, until: datetime | None = None
) -> QuerySet[BrokerLoad]:
    """Broker loads, newest window first."""
    loads = _starting_between(BrokerLoad.objects.filter(cluster=cluster), since, until)
    return loads.order_by("-window_start", "broker_id")


class PartitionLoadRows(Sequence):
    """Partition loads (dicts of `topic`, `partition`, window bounds and
    PARTITION_LOAD_FIELDS), newest window first, then by topic and partition, read
    lazily: its length comes from the topic rows' partition counts, and a slice
    unpacks only the topic rows it covers (a page of the API, not every window)."""

    def __init__(self, topics: QuerySet[TopicLoad]) -> None:
        self._topics = topics.order_by("-window_start", "topic")
        self._index: tuple[list[int], list[int]] | None = None

    def _counted(self) -> tuple[list[int], list[int]]:
        """(topic row ids, running total of partitions up to and including each)."""
        if self._index is None:
            ids: list[int] = []
            ends: list[int] = []
            total = 0
            for pk, count in self._topics.values_list("pk", "partition_count"):
                if count:
                    total += count
                    ids.append(pk)
                    ends.append(total)
            self._index = (ids, ends)
        return self._index

    def __len__(self) -> int:
        ends = self._counted()[1]
        return ends[-1] if ends else 0

    def count(self) -> int:
        return len(self)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, int):
            index = key + len(self) if key < 0 else key
            if not 0 <= index < len(self):
                raise IndexError(key)
            return self[index : index + 1][0]
        start, stop, step = key.indices(len(self))
        if start >= stop:
            return []
        ids, ends = self._counted()
        first = bisect_right(ends, start)
        last = bisect_left(ends, stop)
        base = ends[first - 1] if first else 0
        names = ("partition", *PARTITION_LOAD_FIELDS)
        rows: list[dict[str, Any]] = []
        for topic, window_start, window_end, packed in self._topics.filter(
            pk__in=ids[first : last + 1]
        ).values_list("topic", "window_start", "window_end", "partitions"):
            columns = loads_columns_unpack(packed=packed, fields=names)
            for values in zip(*(columns[f] for f in names), strict=True):
                row = dict(zip(names, values, strict=True))
                row.update(topic=topic, window_start=window_start, window_end=window_end)
                rows.append(row)
        return rows[start - base : stop - base : step]


def loads_partition_filter(
    *,
    cluster: Cluster,
    since: datetime | None = None,
    until: datetime | None = None,
    topic: str = "",
) -> PartitionLoadRows:
    """Partition loads, newest window first."""
    loads = _starting_between(TopicLoad.objects.filter(cluster=cluster), since, until)
    if topic:
        loads = loads.filter(topic=topic)
    return PartitionLoadRows(loads)
