"""Enqueue the plans app's Celery tasks: the one way the services start an execution.

`tasks.py` imports the services (each task calls one), so the services must not import
`tasks.py`. The task is looked up by name in the Celery app's registry instead: no
import edge from the services to the tasks at all, not even a late one. Not
`send_task`: that ignores `CELERY_TASK_ALWAYS_EAGER` and the task's own options, while
the registered task object honours both. The names are the ones the beat schedule
uses; `PlansConfig.ready` imports the tasks module, so they are registered in every
process (web, worker, management commands), not only in a worker.
"""

import logging
from datetime import datetime

from celery import current_app
from django.conf import settings
from django.db import transaction
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)

PLAN_EXECUTE_TASK = "apps.plans.tasks.plan_execute_task"
CLUSTER_RECHECK_TASK = "apps.plans.tasks.cluster_recheck_task"


def execution_enqueue(*, plan_id: int) -> None:
    """Run the executor on a plan once the current transaction commits (now if there is
    none), so the worker reads what this transaction wrote. Enqueuing a plan that is
    already running is harmless: the executor's lease lets one worker step it."""

    def send() -> None:
        try:
            current_app.tasks[PLAN_EXECUTE_TASK].delay(plan_id)
        except OperationalError as exc:
            # The broker (Redis) is unreachable. The approval is committed and must not
            # turn into an error page: the resume sweep enqueues every approved plan
            # nobody runs, at its first round once the broker answers again.
            logger.warning(
                "plan %s: execution not enqueued (task queue unreachable: %s); the resume "
                "sweep starts it within %.0f s of the queue answering again",
                plan_id,
                exc,
                settings.EXECUTOR_RESUME_INTERVAL,
            )

    transaction.on_commit(send)


def recheck_schedule(*, cluster_id: int, at: datetime) -> None:
    """Sync and detect on this cluster at `at` (a dead broker's grace ends), once the
    current transaction commits: self-healing need not wait for the detection tick."""

    def send() -> None:
        try:
            current_app.tasks[CLUSTER_RECHECK_TASK].apply_async((cluster_id,), eta=at)
        except Exception:  # noqa: BLE001 - a queue outage must not fail the sync that saw it
            logger.warning(
                "re-check of cluster %s not scheduled; the periodic round looks again",
                cluster_id,
                exc_info=True,
            )

    transaction.on_commit(send)
