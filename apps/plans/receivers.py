"""What the plans app listens to: a Celery worker's start resumes the executions a
killed worker left behind; a cluster with a plan moving data is not removed; a broker
that stops answering schedules a self-healing re-check for the end of its grace; newly
stored loads start a detection at once."""

import logging

from celery.signals import worker_ready
from django.db import transaction
from django.dispatch import receiver

from apps.clusters.editing import ClusterRemovalRefused
from apps.clusters.models import Cluster
from apps.clusters.signals import broker_state_changed, cluster_removing
from apps.metrics.signals import loads_stored

from .models import Plan, PlanState
from .services import dead_broker_recheck_schedule
from .tasks import cluster_detect_task, executions_resume

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


@receiver(broker_state_changed, dispatch_uid="plans_recheck_on_broker_death")
def _recheck_on_broker_death(sender, cluster, node_id: int, alive: bool, at, **kwargs) -> None:
    # Inside the sync's transaction: the schedule is sent on commit, and never raises.
    if alive:
        return
    try:
        dead_broker_recheck_schedule(cluster=cluster, node_id=node_id, at=at)
    except Exception:
        logger.exception("could not schedule the re-check of %s", cluster.name)


@receiver(loads_stored, dispatch_uid="plans_detect_on_loads_stored")
def _detect_on_new_loads(sender=None, cluster=None, **kwargs) -> None:
    """A skew is acted on when its window is stored, not at the next detection tick."""
    if cluster is None:
        return
    cluster_id = cluster.pk

    def enqueue() -> None:
        try:
            cluster_detect_task.delay(cluster_id)
        except Exception:  # the periodic tick still comes
            logger.exception("could not enqueue a detection of cluster %s", cluster_id)

    transaction.on_commit(enqueue)
