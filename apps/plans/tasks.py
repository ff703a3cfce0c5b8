"""Celery tasks: each fetches by id and calls one service."""

from celery import shared_task

from apps.clusters.models import Cluster

from .executor import execution_run
from .executor import executions_resume as executions_resume_service
from .models import Plan
from .services import cluster_detect, cluster_recheck, clusters_due_for_detection


@shared_task(ignore_result=True)
def plans_detect_all() -> None:
    """Beat: fan out one detection per cluster whose policy interval has elapsed."""
    for cluster_id in clusters_due_for_detection():
        cluster_detect_task.delay(cluster_id)


@shared_task(ignore_result=True)
def cluster_detect_task(cluster_id: int) -> None:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is not None:
        cluster_detect(cluster=cluster)


@shared_task(ignore_result=True)
def cluster_recheck_task(cluster_id: int) -> None:
    """Scheduled at a dead broker's end of grace: sync, then detect."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is not None:
        cluster_recheck(cluster=cluster)


# No expiry and no retry limit: an approved plan must run even if the queue was slow.
@shared_task(ignore_result=True, expires=None, acks_late=True)
def plan_execute_task(plan_id: int) -> None:
    plan = Plan.objects.filter(pk=plan_id).first()
    if plan is not None:
        execution_run(plan=plan)


@shared_task(ignore_result=True)
def executions_resume() -> None:
    """Beat and worker start: carry on what a killed worker left behind."""
    executions_resume_service()
