"""Deliveries run off the request path, retried by Celery with exponential backoff.

The schedule (services.deliveries.retry_delay) is retry_backoff without jitter: the
next retry time in the delivery log is the real one.
"""

from celery import shared_task
from django.conf import settings

from .errors import DeliveryRetryable
from .models import Delivery
from .services.deliveries import delivery_attempt


@shared_task(
    bind=True,
    ignore_result=True,
    autoretry_for=(DeliveryRetryable,),
    retry_backoff=settings.NOTIFICATIONS_RETRY_BACKOFF,
    retry_backoff_max=int(settings.NOTIFICATIONS_RETRY_BACKOFF_MAX),
    retry_jitter=False,
    max_retries=settings.NOTIFICATIONS_MAX_RETRIES,
)
def delivery_send_task(self, delivery_id: int) -> None:
    delivery = Delivery.objects.select_related("channel__cluster").filter(pk=delivery_id).first()
    if delivery is not None:
        delivery_attempt(delivery=delivery)
