"""Celery tasks of the canary; they run on the `clusters` queue (settings)."""

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from apps.clusters.backoff import clusters_due
from apps.clusters.models import Cluster

from .services import canary_round


@shared_task(ignore_result=True)
def canary_probe_all() -> None:
    """Fan out: one canary round per cluster not in backoff; a round still queued when
    the next is due is dropped (it would measure late)."""
    if not settings.CANARY_ENABLED:
        return
    for cluster_id in clusters_due(now=timezone.now()).values_list("id", flat=True):
        canary_probe_task.apply_async((cluster_id,), expires=settings.CANARY_INTERVAL)


@shared_task(ignore_result=True)
def canary_probe_task(cluster_id: int) -> None:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is not None:
        canary_round(cluster=cluster)
