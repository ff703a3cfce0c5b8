"""Retention: a cluster keeps its last METRICS_WINDOWS_KEPT windows of broker loads, the
partition loads of only the last METRICS_PARTITION_WINDOWS_KEPT of them, and
METRICS_RUNS_KEPT_DAYS days of finished runs; older rows are deleted.

Per-partition loads are what grows with the cluster; they are kept packed, one value
per topic and window on its TopicLoad row (a few dozen bytes a partition, where a row
per partition and window would be gigabytes on a large cluster), and the planner and the pages read
only the newest window of them. Older windows keep their per-broker totals (traffic,
disk, counts, leader messages in), which is what the charts read.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Sum
from django.utils import timezone

from apps.clusters.models import Cluster

from ..models import AggregationRun, BrokerLoad, TopicLoad


def _cutoff(newest: datetime, keep: int) -> datetime:
    # Windows start one slide apart: the `keep` newest start at or after this.
    return newest - timedelta(seconds=settings.METRICS_WINDOW_SLIDE_SECONDS * (keep - 1))


def metrics_windows_prune(
    *, cluster: Cluster, keep: int | None = None, keep_partitions: int | None = None
) -> int:
    """Keep the newest `keep` broker windows and the newest `keep_partitions` partition
    windows (never more than `keep`); returns the partition loads deleted."""
    keep = keep or settings.METRICS_WINDOWS_KEPT
    keep_partitions = min(keep_partitions or settings.METRICS_PARTITION_WINDOWS_KEPT, keep)
    newest = (
        BrokerLoad.objects.filter(cluster=cluster)
        .order_by("-window_start")
        .values_list("window_start", flat=True)
        .first()
    )
    newest_partition = (
        TopicLoad.objects.filter(cluster=cluster)
        .order_by("-window_start")
        .values_list("window_start", flat=True)
        .first()
    )
    if newest_partition is not None and (newest is None or newest_partition > newest):
        newest = newest_partition
    if newest is None:
        return 0
    detail_cutoff = _cutoff(newest, keep_partitions)
    old = TopicLoad.objects.filter(cluster=cluster, window_start__lt=detail_cutoff)
    deleted = old.aggregate(n=Sum("partition_count"))["n"] or 0
    old.delete()
    BrokerLoad.objects.filter(cluster=cluster, window_start__lt=_cutoff(newest, keep)).delete()
    runs_cutoff = timezone.now() - timedelta(days=settings.METRICS_RUNS_KEPT_DAYS)
    AggregationRun.objects.filter(cluster=cluster, started_at__lt=runs_cutoff).exclude(
        status=AggregationRun.Status.RUNNING
    ).delete()
    return deleted
