"""What the plans app listens to: a Celery worker's start resumes the executions a
killed worker left behind."""

import logging

from celery.signals import worker_ready

from .tasks import executions_resume

logger = logging.getLogger(__name__)


@worker_ready.connect(dispatch_uid="plans_resume_on_worker_ready")
def _resume_on_start(sender=None, **kwargs) -> None:
    try:
        executions_resume.delay()
    except Exception:  # a broker hiccup must not stop the worker from starting
        logger.exception("could not enqueue the resume of executions")
