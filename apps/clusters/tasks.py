"""Celery tasks of the clusters app; they run on the `clusters` queue (settings)."""

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from .backoff import clusters_due
from .models import Cluster
from .rounds import rounds_started_before
from .services import cluster_sync


@shared_task(ignore_result=True)
def clusters_sync_all() -> None:
    """Fan out: one task per cluster not in backoff whose last sync started an interval
    ago, less three quarters of a tick (the time its task may have waited in the queue),
    so one unreachable cluster delays no other. Beat sends this every CLUSTER_SYNC_TICK
    (a quarter interval): a cluster syncs once an interval, and a sync lost with its
    worker (or to a Redis restart) is made up a tick later, not an interval later. A
    sync still queued at the next tick is dropped."""
    now = timezone.now()
    interval = float(settings.CLUSTER_SYNC_INTERVAL)
    tick = float(settings.CLUSTER_SYNC_TICK)
    due = clusters_due(now=now).values_list("id", flat=True)
    recent = rounds_started_before(kind="sync", seconds=interval - 0.75 * tick, now=now)
    for cluster_id in due:
        if cluster_id not in recent:
            cluster_sync_task.apply_async((cluster_id,), expires=tick)


@shared_task(ignore_result=True)
def cluster_sync_task(cluster_id: int) -> None:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is not None:
        cluster_sync(cluster=cluster)
