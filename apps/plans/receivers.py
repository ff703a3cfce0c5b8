"""What the plans app listens to: a Celery worker's start resumes the executions a
killed worker left behind; a cluster with a plan moving data is not removed."""

import logging

from celery.signals import worker_ready
from django.dispatch import receiver

from apps.clusters.editing import ClusterRemovalRefused
from apps.clusters.models import Cluster
from apps.clusters.signals import cluster_removing

from .models import Plan, PlanState
from .tasks import executions_resume

logger = logging.getLogger(__name__)


@worker_ready.connect(dispatch_uid="plans_resume_on_worker_ready")
def _resume_on_start(sender=None, **kwargs) -> None:
    try:
        executions_resume.delay()
    except Exception:  # a broker hiccup must not stop the worker from starting
        logger.exception("could not enqueue the resume of executions")


@receiver(cluster_removing, sender=Cluster, dispatch_uid="plans_refuse_removal_while_executing")
def _refuse_removal_while_executing(sender, cluster: Cluster, **kwargs) -> None:
    # Removing it would orphan reassignments and throttles in Kafka with no one to finish them.
    running = Plan.objects.filter(cluster=cluster, state=PlanState.EXECUTING).first()
    if running is not None:
        raise ClusterRemovalRefused(
            f"plan {running.pk} is executing on {cluster.name}: cancel it or let it finish first"
        )
