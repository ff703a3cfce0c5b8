"""Celery tasks of the clusters app; they run on the `clusters` queue (settings)."""

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from .backoff import clusters_due
from .models import Cluster
from .services import cluster_sync


@shared_task(ignore_result=True)
def clusters_sync_all() -> None:
    """Fan out: one task per cluster not in backoff, so one unreachable cluster delays
    no other. A sync still queued when the next round is due is dropped by the worker."""
    for cluster_id in clusters_due(now=timezone.now()).values_list("id", flat=True):
        cluster_sync_task.apply_async((cluster_id,), expires=settings.CLUSTER_SYNC_INTERVAL)


@shared_task(ignore_result=True)
def cluster_sync_task(cluster_id: int) -> None:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is not None:
        cluster_sync(cluster=cluster)
