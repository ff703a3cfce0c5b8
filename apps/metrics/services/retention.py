"""Retention: a cluster keeps its last METRICS_WINDOWS_KEPT windows of loads and
METRICS_RUNS_KEPT_DAYS days of finished runs; older rows are deleted.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from apps.clusters.models import Cluster

from ..models import AggregationRun, BrokerLoad, PartitionLoad, TopicLoad


def metrics_windows_prune(*, cluster: Cluster, keep: int | None = None) -> int:
    """Keep the newest `keep` windows (they start one slide apart)."""
    keep = keep or settings.METRICS_WINDOWS_KEPT
    newest = (
        PartitionLoad.objects.filter(cluster=cluster)
        .order_by("-window_start")
        .values_list("window_start", flat=True)
        .first()
    )
    if newest is None:
        return 0
    cutoff = newest - timedelta(seconds=settings.METRICS_WINDOW_SLIDE_SECONDS * (keep - 1))
    deleted, _ = PartitionLoad.objects.filter(cluster=cluster, window_start__lt=cutoff).delete()
    BrokerLoad.objects.filter(cluster=cluster, window_start__lt=cutoff).delete()
    TopicLoad.objects.filter(cluster=cluster, window_start__lt=cutoff).delete()
    runs_cutoff = timezone.now() - timedelta(days=settings.METRICS_RUNS_KEPT_DAYS)
    AggregationRun.objects.filter(cluster=cluster, started_at__lt=runs_cutoff).exclude(
        status=AggregationRun.Status.RUNNING
    ).delete()
    return deleted
