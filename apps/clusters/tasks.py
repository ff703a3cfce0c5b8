from celery import shared_task

from .models import Cluster
from .services import cluster_sync


@shared_task(ignore_result=True)
def clusters_sync_all() -> None:
    """Fan out: one task per cluster, so one unreachable cluster delays no other."""
    for cluster_id in Cluster.objects.values_list("id", flat=True):
        cluster_sync_task.delay(cluster_id)


@shared_task(ignore_result=True)
def cluster_sync_task(cluster_id: int) -> None:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is not None:
        cluster_sync(cluster=cluster)
