import logging

from celery import shared_task
from django.conf import settings

from apps.clusters.models import Cluster

from .services import (
    AggregationAlreadyRunning,
    SampleNotAuthorized,
    aggregation_dispatch,
    metrics_sample,
)

logger = logging.getLogger(__name__)


@shared_task(ignore_result=True)
def metrics_sample_all() -> None:
    """Fan out: one sample task per cluster.

    A sample still queued when the next round is due is dropped: it would measure
    late and only delay the next round.
    """
    for cluster_id in Cluster.objects.values_list("id", flat=True):
        metrics_sample_task.apply_async((cluster_id,), expires=settings.METRICS_SAMPLE_INTERVAL)


@shared_task(ignore_result=True)
def metrics_sample_task(cluster_id: int) -> None:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is not None:
        try:
            metrics_sample(cluster=cluster)
        except SampleNotAuthorized as exc:  # a missing ACL: one line, not a traceback
            logger.warning("sample of %s: %s", cluster.name, exc)


@shared_task(ignore_result=True)
def metrics_aggregate_all() -> None:
    """Fan out: one aggregation task per cluster.

    These do not expire: on a busy aggregation worker the last clusters would never
    run; a queued duplicate reads only what is new, or finds the lock taken.
    """
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
