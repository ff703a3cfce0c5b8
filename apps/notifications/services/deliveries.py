"""One delivery attempt: POST, record it in the delivery log, decide whether to retry.

The retry schedule is Celery's `retry_backoff` without jitter, so the `next_retry_at`
written here is when the task (tasks.delivery_send_task) really runs again.
"""

import logging
from datetime import datetime, timedelta

from celery.utils.time import get_exponential_backoff_interval
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..errors import DeliveryRetryable
from ..models import AttemptOutcome, Delivery, DeliveryAttempt, DeliveryState
from ..sending import SendResult, event_send

logger = logging.getLogger(__name__)


def retry_delay(*, attempt: int) -> int:
    """Seconds between attempt number `attempt` (from 1) failing and the next one."""
    return get_exponential_backoff_interval(
        factor=int(max(1.0, settings.NOTIFICATIONS_RETRY_BACKOFF)),
        retries=attempt - 1,
        maximum=int(settings.NOTIFICATIONS_RETRY_BACKOFF_MAX),
        full_jitter=False,
    )


def attempt_outcome(*, result: SendResult, attempt: int) -> str:
    """Delivered; retry (a retryable failure with retries left); or give up."""
    if result.ok:
        return AttemptOutcome.DELIVERED
    if result.retryable and attempt <= settings.NOTIFICATIONS_MAX_RETRIES:
        return AttemptOutcome.WILL_RETRY
    return AttemptOutcome.GAVE_UP


def delivery_attempt(*, delivery: Delivery, now: datetime | None = None) -> DeliveryAttempt | None:
    """Make one attempt and log it. Raises DeliveryRetryable when a retry is due.

    A finished delivery is left alone (None), so a duplicated task sends nothing twice.
    """
    if delivery.state in (DeliveryState.DELIVERED, DeliveryState.FAILED):
        return None
    channel = delivery.channel
    number = delivery.attempts + 1
    if channel.enabled:
        result = event_send(
            channel=channel, payload=delivery.payload, timeout=settings.NOTIFICATIONS_TIMEOUT
        )
    else:
        result = SendResult(False, None, "channel disabled: not sent", False, 0)
    now = now or timezone.now()
    outcome = attempt_outcome(result=result, attempt=number)
    next_retry_at = (
        now + timedelta(seconds=retry_delay(attempt=number))
        if outcome == AttemptOutcome.WILL_RETRY
        else None
    )
    with transaction.atomic():
        attempt = DeliveryAttempt.objects.create(
            delivery=delivery,
            number=number,
            at=now,
            outcome=outcome,
            status_code=result.status_code,
            error=result.error,
            duration_ms=result.duration_ms,
            next_retry_at=next_retry_at,
        )
        delivery.attempts = number
        delivery.last_status_code = result.status_code
        delivery.last_error = result.error
        delivery.next_retry_at = next_retry_at
        delivery.state = {
            AttemptOutcome.DELIVERED: DeliveryState.DELIVERED,
            AttemptOutcome.WILL_RETRY: DeliveryState.RETRYING,
            AttemptOutcome.GAVE_UP: DeliveryState.FAILED,
        }[outcome]
        if result.ok:
            delivery.delivered_at = now
        delivery.save()
    # The channel is named by id and host only: its URL path and secret are credentials.
    log = logger.info if result.ok else logger.warning
    log(
        "notification %s to channel %s (%s), attempt %s: %s%s",
        delivery.event,
        channel.pk,
        channel.url_host,
        number,
        outcome,
        f" ({result.error})" if result.error else "",
    )
    if outcome == AttemptOutcome.WILL_RETRY:
        raise DeliveryRetryable(f"delivery {delivery.pk}: {result.error}")
    return attempt
