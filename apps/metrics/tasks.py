from celery import shared_task
from django.conf import settings
from django.utils import timezone

from apps.clusters.backoff import clusters_due
from apps.clusters.models import Cluster, ClusterRound
from apps.clusters.rounds import round_skip_record

from .services import AggregationAlreadyRunning, aggregation_dispatch, metrics_sample_round


@shared_task(ignore_result=True)
def metrics_sample_all() -> None:
    """Fan out: one sample task per cluster not in backoff.

    A sample still queued when the next round is due is dropped: it would measure
    late and only delay the next round.
    """
    for cluster_id in clusters_due(now=timezone.now()).values_list("id", flat=True):
        metrics_sample_task.apply_async((cluster_id,), expires=settings.METRICS_SAMPLE_INTERVAL)


@shared_task(ignore_result=True)
def metrics_sample_task(cluster_id: int) -> None:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return
    sampled = metrics_sample_round(cluster=cluster)
    if sampled is not None and settings.METRICS_AGGREGATE_AFTER_SAMPLE:
        # The round is flushed, so the window it completed can be stored now rather
        # than at the next tick. Still queued at the next round, it is dropped: that
        # round's own run reads these records too (the tick's runs never expire).
        metrics_aggregate_task.apply_async((cluster_id,), expires=settings.METRICS_SAMPLE_INTERVAL)


@shared_task(ignore_result=True)
def metrics_aggregate_all() -> None:
    """Fan out: one aggregation task per cluster not in backoff.

    These do not expire: on a busy aggregation worker the last clusters would never
    run; a queued duplicate reads only what is new, or finds the lock taken.
    """
    for cluster_id in clusters_due(now=timezone.now()).values_list("id", flat=True):
        metrics_aggregate_task.delay(cluster_id)


@shared_task(ignore_result=True)
def metrics_aggregate_task(cluster_id: int) -> None:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return
    try:
        aggregation_dispatch(cluster=cluster)
    except AggregationAlreadyRunning:
        # Counted, never overlapped: the running one will pick up these records too.
        round_skip_record(cluster=cluster, kind=ClusterRound.AGGREGATION)
