from celery import shared_task

from apps.clusters.models import Cluster

from .services import AggregationAlreadyRunning, aggregation_dispatch, metrics_sample


@shared_task(ignore_result=True)
def metrics_sample_all() -> None:
    """Fan out: one sample task per cluster."""
    for cluster_id in Cluster.objects.values_list("id", flat=True):
        metrics_sample_task.delay(cluster_id)


@shared_task(ignore_result=True)
def metrics_sample_task(cluster_id: int) -> None:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is not None:
        metrics_sample(cluster=cluster)


@shared_task(ignore_result=True)
def metrics_aggregate_all() -> None:
    """Fan out: one aggregation task per cluster."""
    for cluster_id in Cluster.objects.values_list("id", flat=True):
        metrics_aggregate_task.delay(cluster_id)


@shared_task(ignore_result=True)
def metrics_aggregate_task(cluster_id: int) -> None:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return
    try:
        aggregation_dispatch(cluster=cluster)
    except AggregationAlreadyRunning:
        pass  # the running one will pick up these records too
