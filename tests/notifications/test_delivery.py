"""Delivery to a real HTTP receiver on 127.0.0.1: signed webhooks, Slack payloads, the
retry schedule and the delivery log. The task runs eagerly (`apply`): a retry runs at
once instead of after its countdown, so nothing here waits."""

import hashlib
import hmac
import json
import logging
import socket
import time
from datetime import timedelta

import pytest
from celery.utils.time import get_exponential_backoff_interval

from apps.audit.services import actor_system
from apps.notifications.errors import DeliveryRetryable
from apps.notifications.models import (
    AttemptOutcome,
    ChannelKind,
    Delivery,
    DeliveryState,
    NotificationChannel,
)
from apps.notifications.sending import SendResult, status_retryable
from apps.notifications.services.deliveries import attempt_outcome, delivery_attempt, retry_delay
from apps.notifications.tasks import delivery_send_task
from apps.plans.services.plan_audit import plan_audit_record
from tests.notifications.conftest import SECRET, SLACK_PATH
from tests.support.factories import plan_row_make

pytestmark = pytest.mark.django_db


def proposed(cluster) -> list[Delivery]:
    """Deliveries of a `plan.proposed` event, as the audit trail would make them."""
    plan_audit_record(
        plan=plan_row_make(cluster), actor=actor_system(name="detector"), action="plan.proposed"
    )
    return list(Delivery.objects.order_by("id"))


def log_of(delivery: Delivery) -> list[tuple]:
    return list(delivery.log.values_list("number", "outcome", "status_code", "error"))


def test_it_delivers_a_webhook_the_receiver_can_verify(empty_cluster, webhook, receiver):
    [delivery] = proposed(empty_cluster)

    delivery_send_task.apply(args=[delivery.pk])

    [request] = receiver.requests
    assert request.path == "/hook"
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["X-Balancer-Event"] == "plan.proposed"
    assert request.headers["X-Balancer-Delivery"] == delivery.payload["id"]
    # Checked as a receiver would, without the app's own code.
    timestamp = request.headers["X-Balancer-Timestamp"]
    expected = hmac.new(SECRET.encode(), f"{timestamp}.".encode() + request.body, hashlib.sha256)
    assert request.headers["X-Balancer-Signature"] == "sha256=" + expected.hexdigest()
    assert abs(time.time() - int(timestamp)) < 300
    assert request.json() == delivery.payload
    delivery.refresh_from_db()
    assert delivery.state == DeliveryState.DELIVERED and delivery.delivered_at is not None
    assert log_of(delivery) == [(1, AttemptOutcome.DELIVERED, 200, "")]


def test_it_posts_slack_one_text_line_without_a_signature(empty_cluster, slack, receiver):
    [delivery] = proposed(empty_cluster)

    delivery_send_task.apply(args=[delivery.pk])

    [request] = receiver.requests
    assert request.path == SLACK_PATH
    assert list(request.json()) == ["text"]
    assert request.json()["text"] == delivery.payload["summary"]
    assert "X-Balancer-Signature" not in request.headers
    assert Delivery.objects.get().state == DeliveryState.DELIVERED


def test_it_retries_after_a_500_and_logs_both_attempts(empty_cluster, webhook, receiver):
    receiver.statuses = [500]
    [delivery] = proposed(empty_cluster)

    delivery_send_task.apply(args=[delivery.pk])

    assert len(receiver.requests) == 2
    # The same event both times, each signed afresh.
    assert receiver.requests[0].body == receiver.requests[1].body
    delivery.refresh_from_db()
    assert delivery.state == DeliveryState.DELIVERED and delivery.attempts == 2
    assert log_of(delivery) == [
        (1, AttemptOutcome.WILL_RETRY, 500, "HTTP 500 Internal Server Error"),
        (2, AttemptOutcome.DELIVERED, 200, ""),
    ]
    first = delivery.log.get(number=1)
    assert first.next_retry_at == first.at + timedelta(seconds=retry_delay(attempt=1))


def test_each_service_step_records_the_retry_it_asks_for(empty_cluster, webhook, receiver):
    receiver.statuses = [503]
    [delivery] = proposed(empty_cluster)

    with pytest.raises(DeliveryRetryable):
        delivery_attempt(delivery=delivery)
    delivery.refresh_from_db()
    assert delivery.state == DeliveryState.RETRYING
    assert delivery.last_status_code == 503 and delivery.next_retry_at is not None

    delivery_attempt(delivery=delivery)
    delivery.refresh_from_db()
    assert delivery.state == DeliveryState.DELIVERED and delivery.next_retry_at is None

    # A duplicated task finds it delivered and sends nothing more.
    assert delivery_attempt(delivery=delivery) is None
    assert len(receiver.requests) == 2


def test_it_gives_up_at_once_on_a_client_error(empty_cluster, webhook, receiver):
    receiver.statuses = [404]
    [delivery] = proposed(empty_cluster)

    delivery_send_task.apply(args=[delivery.pk])

    delivery.refresh_from_db()
    assert delivery.state == DeliveryState.FAILED
    assert log_of(delivery) == [(1, AttemptOutcome.GAVE_UP, 404, "HTTP 404 Not Found")]
    assert len(receiver.requests) == 1


def test_it_gives_up_after_the_last_retry(empty_cluster, webhook, receiver, settings):
    settings.NOTIFICATIONS_MAX_RETRIES = 2
    receiver.statuses = [503] * 5
    [delivery] = proposed(empty_cluster)

    delivery_send_task.apply(args=[delivery.pk])

    delivery.refresh_from_db()
    assert delivery.state == DeliveryState.FAILED and delivery.attempts == 3
    assert [row[1] for row in log_of(delivery)] == [
        AttemptOutcome.WILL_RETRY,
        AttemptOutcome.WILL_RETRY,
        AttemptOutcome.GAVE_UP,
    ]
    assert delivery.log.get(number=3).next_retry_at is None


def test_it_does_not_send_to_a_channel_disabled_meanwhile(empty_cluster, webhook, receiver):
    [delivery] = proposed(empty_cluster)
    NotificationChannel.objects.filter(pk=webhook.pk).update(enabled=False)

    delivery_send_task.apply(args=[delivery.pk])

    assert receiver.requests == []
    assert log_of(Delivery.objects.get()) == [
        (1, AttemptOutcome.GAVE_UP, None, "channel disabled: not sent")
    ]


def test_it_retries_a_receiver_that_never_answers(empty_cluster, receiver, settings):
    settings.NOTIFICATIONS_TIMEOUT = 0.2
    with socket.socket() as silent:
        # Listening but never accepting: the connection opens, no answer ever comes.
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        NotificationChannel.objects.create(
            cluster=empty_cluster,
            name="silent",
            kind=ChannelKind.SLACK,
            url=f"http://127.0.0.1:{silent.getsockname()[1]}/x",
        )
        [delivery] = proposed(empty_cluster)

        with pytest.raises(DeliveryRetryable):
            delivery_attempt(delivery=delivery)

    assert log_of(delivery) == [(1, AttemptOutcome.WILL_RETRY, None, "no answer within 0.2 s")]


def test_it_never_writes_the_url_token_or_secret_to_the_log(empty_cluster, closed_port, caplog):
    url = f"http://127.0.0.1:{closed_port}{SLACK_PATH}?key=querytoken"
    channel = NotificationChannel.objects.create(
        cluster=empty_cluster, name="down", kind=ChannelKind.WEBHOOK, url=url, secret=SECRET
    )
    [delivery] = proposed(empty_cluster)

    with caplog.at_level(logging.DEBUG), pytest.raises(DeliveryRetryable):
        delivery_attempt(delivery=delivery)

    delivery.refresh_from_db()
    error = delivery.log.get().error
    assert error.startswith("ConnectionError:") and "127.0.0.1" in error
    written = error + delivery.last_error + caplog.text + json.dumps(delivery.payload)
    for secret in ("XXXXtokenXXXX", "querytoken", SECRET):
        assert secret not in written
    assert channel.url_host in caplog.text


# --- the retry decision, without a receiver -------------------------------------------------


def result(ok=False, status=None, retryable=True) -> SendResult:
    return SendResult(ok=ok, status_code=status, error="", retryable=retryable, duration_ms=1)


def test_it_decides_delivered_retry_or_give_up(settings):
    settings.NOTIFICATIONS_MAX_RETRIES = 3

    assert attempt_outcome(result=result(ok=True, status=200), attempt=1) == "delivered"
    assert attempt_outcome(result=result(status=503), attempt=3) == "will_retry"
    assert attempt_outcome(result=result(status=503), attempt=4) == "gave_up"
    assert attempt_outcome(result=result(status=400, retryable=False), attempt=1) == "gave_up"


def test_it_retries_only_statuses_that_can_heal():
    assert [
        s
        for s in (400, 401, 403, 404, 408, 410, 413, 429, 500, 502, 503, 504, 599)
        if status_retryable(s)
    ] == [408, 429, 500, 502, 503, 504, 599]


def test_it_doubles_the_wait_up_to_the_maximum(settings):
    settings.NOTIFICATIONS_RETRY_BACKOFF = 10
    settings.NOTIFICATIONS_RETRY_BACKOFF_MAX = 600

    assert [retry_delay(attempt=n) for n in range(1, 9)] == [10, 20, 40, 80, 160, 320, 600, 600]


def test_its_schedule_is_the_one_celery_retries_the_task_on():
    # What Celery's autoretry computes from the task's own options (celery/app/autoretry.py).
    task = delivery_send_task
    assert task.retry_jitter is False and DeliveryRetryable in task.autoretry_for
    for n in range(1, 9):
        celery_countdown = get_exponential_backoff_interval(
            factor=int(max(1.0, task.retry_backoff)),
            retries=n - 1,
            maximum=task.retry_backoff_max,
            full_jitter=task.retry_jitter,
        )
        assert celery_countdown == retry_delay(attempt=n)
