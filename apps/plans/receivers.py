"""What the plans app listens to: a Celery worker's start resumes the executions a
killed worker left behind; newly stored loads start a detection at once."""

import logging

from celery.signals import worker_ready
from django.db import transaction
from django.dispatch import receiver

from apps.metrics.signals import loads_stored

from .tasks import cluster_detect_task, executions_resume

logger = logging.getLogger(__name__)


@worker_ready.connect(dispatch_uid="plans_resume_on_worker_ready")
def _resume_on_start(sender=None, **kwargs) -> None:
    try:
        executions_resume.delay()
    except Exception:  # a broker hiccup must not stop the worker from starting
        logger.exception("could not enqueue the resume of executions")


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
