"""An event becomes one delivery per channel that wants it, queued after commit.

The rows are written in the caller's transaction (a sync round, a plan transition),
so a notification exists exactly when the change it reports does.
"""

from functools import partial

from django.db import transaction

from ..events import Event, event_payload
from ..models import Delivery
from ..selectors import channels_for_event
from ..tasks import delivery_send_task


def notifications_dispatch(*, event: Event) -> list[Delivery]:
    channels = channels_for_event(cluster_id=event.cluster_id, event=event.kind)
    if not channels:
        return []
    payload = event_payload(event=event)
    deliveries = []
    for channel in channels:
        delivery = Delivery.objects.create(channel=channel, event=event.kind, payload=payload)
        # robust: a Redis outage must not fail the change being notified. The row stays
        # pending and shows in the delivery log.
        transaction.on_commit(partial(delivery_send_task.delay, delivery.pk), robust=True)
        deliveries.append(delivery)
    return deliveries
