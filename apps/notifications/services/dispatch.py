"""An event becomes one delivery per channel that wants it, queued after commit.

The rows are written in the caller's transaction (a sync round, a plan transition),
so a notification exists exactly when the change it reports does.
"""

from ..events import Event, event_payload
from ..models import Delivery
from ..queue import delivery_enqueue
from ..selectors import channels_for_event


def notifications_dispatch(*, event: Event) -> list[Delivery]:
    channels = channels_for_event(cluster_id=event.cluster_id, event=event.kind)
    if not channels:
        return []
    payload = event_payload(event=event)
    deliveries = []
    for channel in channels:
        delivery = Delivery.objects.create(channel=channel, event=event.kind, payload=payload)
        delivery_enqueue(delivery_id=delivery.pk)
        deliveries.append(delivery)
    return deliveries
