"""Stored load windows (per partition, per broker): the newest, or a time range."""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

from apps.clusters.models import Cluster

from ..models import BrokerLoad, PartitionLoad


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
    return _newest_start(PartitionLoad.objects.filter(cluster=cluster))


def partition_loads_latest(*, cluster: Cluster) -> QuerySet[PartitionLoad]:
    start = latest_window_start(cluster=cluster)
    if start is None:
        return PartitionLoad.objects.none()
    return PartitionLoad.objects.filter(cluster=cluster, window_start=start)


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


def loads_partition_filter(
    *,
    cluster: Cluster,
    since: datetime | None = None,
    until: datetime | None = None,
    topic: str = "",
) -> QuerySet[PartitionLoad]:
    """Partition loads, newest window first."""
    loads = _starting_between(PartitionLoad.objects.filter(cluster=cluster), since, until)
    if topic:
        loads = loads.filter(topic=topic)
    return loads.order_by("-window_start", "topic", "partition")
