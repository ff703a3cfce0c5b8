"""Enqueue a delivery: the one way the services reach the delivery task.

`tasks.py` imports the services (the task calls `delivery_attempt`), so the services
look the task up by name in the Celery app's registry instead of importing it, as
`apps.plans.queue` does, and for the same reasons. `NotificationsConfig.ready` imports
the tasks module, so the task is registered in every process.
"""

from functools import partial

from celery import current_app
from django.db import transaction

DELIVERY_SEND_TASK = "apps.notifications.tasks.delivery_send_task"


def delivery_enqueue(*, delivery_id: int) -> None:
    """Send the delivery once the current transaction commits. Robust: a Redis outage
    must not fail the change being notified; the row stays pending and shows in the
    delivery log."""

    def send(delivery_id: int) -> None:
        current_app.tasks[DELIVERY_SEND_TASK].delay(delivery_id)

    transaction.on_commit(partial(send, delivery_id), robust=True)
