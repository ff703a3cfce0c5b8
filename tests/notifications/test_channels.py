"""Channel services: validation, encryption at rest, audit without credentials, and the
synchronous test send."""

import json

import pytest
from django.db import connection

from apps.audit.models import AuditEvent
from apps.notifications.errors import NotificationChannelInvalid
from apps.notifications.models import ChannelKind, EventKind, NotificationChannel
from apps.notifications.services.channels import (
    notification_channel_create,
    notification_channel_delete,
    notification_channel_test,
    notification_channel_update,
)
from tests.notifications.conftest import SECRET, SLACK_PATH

pytestmark = pytest.mark.django_db
SLACK_URL = f"https://hooks.example.com{SLACK_PATH}"


def create(cluster, actor, **overrides) -> NotificationChannel:
    values = {
        "cluster": cluster,
        "name": "ops",
        "kind": ChannelKind.WEBHOOK,
        "url": "https://alerts.example.com/in?token=abc123",
        "secret": SECRET,
        "actor": actor,
    }
    return notification_channel_create(**(values | overrides))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"url": "ftp://alerts.example.com/"}, "http:// or https://"),
        ({"url": "https://"}, "http:// or https://"),
        ({"secret": "short"}, "at least 16 characters"),
        ({"events": ["plan.eaten"]}, "unknown event 'plan.eaten'"),
        ({"events": []}, "at least one event"),
        ({"events": ["test"]}, "unknown event 'test'"),
        ({"kind": "pager"}, "unknown channel kind"),
        ({"name": " "}, "needs a name"),
    ],
)
def test_it_refuses_bad_settings_and_creates_nothing(
    empty_cluster, admin_member, overrides, message
):
    with pytest.raises(NotificationChannelInvalid, match=message):
        create(empty_cluster, admin_member, **overrides)

    assert not NotificationChannel.objects.exists() and not AuditEvent.objects.exists()


def test_it_needs_no_secret_for_slack(empty_cluster, admin_member):
    channel = create(empty_cluster, admin_member, kind=ChannelKind.SLACK, url=SLACK_URL, secret="")

    assert channel.url_host == "hooks.example.com" and channel.all_events


def test_it_refuses_a_second_channel_of_the_same_name(empty_cluster, admin_member):
    create(empty_cluster, admin_member)

    with pytest.raises(NotificationChannelInvalid, match="already has a channel named 'ops'"):
        create(empty_cluster, admin_member)


def test_it_stores_the_url_and_secret_encrypted(empty_cluster, admin_member):
    channel = create(
        empty_cluster, admin_member, kind=ChannelKind.SLACK, url=SLACK_URL, secret=SECRET
    )

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT url, secret FROM notifications_notificationchannel WHERE id = %s",
            [channel.pk],
        )
        stored = " ".join(cursor.fetchone())
    assert "XXXXtokenXXXX" not in stored and SECRET not in stored and "hooks" not in stored
    fresh = NotificationChannel.objects.get(pk=channel.pk)
    assert (fresh.url, fresh.secret) == (SLACK_URL, SECRET)


def test_it_audits_every_change_without_the_url_or_secret(empty_cluster, admin_member):
    channel = create(empty_cluster, admin_member, events=[EventKind.PLAN_PROPOSED])
    notification_channel_update(
        channel=channel,
        actor=admin_member,
        changes={"url": "https://alerts.example.com/v2?token=new456", "secret": "n" * 32},
    )
    notification_channel_delete(channel=channel, actor=admin_member)

    rows = list(AuditEvent.objects.order_by("id"))
    assert [r.action for r in rows] == [
        "notification_channel.created",
        "notification_channel.changed",
        "notification_channel.deleted",
    ]
    assert rows[0].after["host"] == "alerts.example.com"
    assert rows[1].after["url_changed"] and rows[1].after["secret_changed"]
    written = json.dumps([[r.before, r.after, r.object_repr] for r in rows])
    for secret in ("abc123", "new456", "/in", SECRET, "n" * 32):
        assert secret not in written
    assert not NotificationChannel.objects.exists()


def test_it_keeps_the_stored_url_and_secret_when_left_empty(empty_cluster, admin_member):
    channel = create(empty_cluster, admin_member)

    notification_channel_update(
        channel=channel,
        actor=admin_member,
        changes={"url": "", "secret": "", "all_events": False, "events": ["plan.approved"]},
    )

    fresh = NotificationChannel.objects.get(pk=channel.pk)
    assert fresh.url == "https://alerts.example.com/in?token=abc123" and fresh.secret == SECRET
    assert fresh.wants("plan.approved") and not fresh.wants("plan.proposed")
    assert "url_changed" not in AuditEvent.objects.get(action__endswith="changed").after


def test_it_refuses_an_unknown_field_and_changes_nothing(empty_cluster, admin_member):
    channel = create(empty_cluster, admin_member)

    with pytest.raises(NotificationChannelInvalid, match="unknown channel field 'kind'"):
        notification_channel_update(
            channel=channel, actor=admin_member, changes={"kind": ChannelKind.SLACK}
        )

    assert NotificationChannel.objects.get().kind == ChannelKind.WEBHOOK


def test_the_test_send_reaches_the_receiver_and_is_audited(
    empty_cluster, slack, receiver, admin_member
):
    outcome = notification_channel_test(channel=slack, actor=admin_member)

    assert (outcome.ok, outcome.status_code, outcome.error) == (True, 200, "")
    [request] = receiver.requests
    assert request.headers["X-Balancer-Event"] == "test"
    assert request.json() == {"text": "[prod] Test notification for channel 'slack', sent by ada"}
    audit = AuditEvent.objects.get(action="notification_channel.tested")
    assert audit.after == {"ok": True, "status_code": 200, "error": ""}


def test_the_test_send_reports_a_refusal_and_does_not_retry(
    empty_cluster, webhook, receiver, admin_member
):
    receiver.statuses = [500]

    outcome = notification_channel_test(channel=webhook, actor=admin_member)

    assert (outcome.ok, outcome.error) == (False, "HTTP 500 Internal Server Error")
    assert len(receiver.requests) == 1
    assert not webhook.deliveries.exists()
