"""Webhook and Slack URLs that point inside (loopback, link-local, in any spelling, or a
name resolving there) are refused when saved, and again when sent: the receiver that
listens there gets nothing."""

import pytest
from devkit.users import user_make

from apps.notifications.errors import NotificationChannelInvalid
from apps.notifications.models import ChannelKind, NotificationChannel
from apps.notifications.services.channels import (
    notification_channel_create,
    notification_channel_test,
)
from tests.support.http_receivers import receiver_running, resolver_patch

pytestmark = pytest.mark.django_db

SECRET = "s3cret-signing-key-0123456789abcdef"
INTERNAL_NAME = "hooks.internal.test"

# (host as written in the URL, where its receiver listens or None, what the refusal says)
ATTACKS = {
    "metadata": ("169.254.169.254", None, "link-local"),
    "localhost": ("localhost", "127.0.0.1", "loopback"),
    "decimal": ("2852039166", None, "link-local"),
    "octal": ("0177.0.0.1", "127.0.0.1", "loopback"),
    "ipv6-loopback": ("[::1]", "::1", "loopback"),
    "ipv4-mapped": ("[::ffff:127.0.0.1]", "127.0.0.1", "loopback"),
    "name-resolving-inside": (INTERNAL_NAME, "127.0.0.1", "loopback"),
}


@pytest.fixture
def admin_member(db):
    return user_make("ada", "admin")


@pytest.fixture(autouse=True)
def _quick(settings, monkeypatch):
    # An attack that is not refused must fail fast, not wait for a timeout.
    settings.NOTIFICATIONS_TEST_TIMEOUT = 0.5
    settings.NOTIFICATIONS_ALLOWED_NETWORKS = []
    resolver_patch(monkeypatch, {INTERNAL_NAME: [["127.0.0.1"]]})


def _listening(where: str | None):
    return receiver_running(where) if where else receiver_running("127.0.0.1")


@pytest.mark.parametrize("attack", ATTACKS, ids=list(ATTACKS))
def test_it_refuses_an_internal_url_when_saved(attack, empty_cluster, admin_member):
    host, _where, kind = ATTACKS[attack]

    with pytest.raises(NotificationChannelInvalid, match=kind):
        notification_channel_create(
            cluster=empty_cluster,
            name="hook",
            kind=ChannelKind.WEBHOOK,
            url=f"http://{host}:8080/hook",
            secret=SECRET,
            actor=admin_member,
        )

    assert not NotificationChannel.objects.exists()


@pytest.mark.parametrize("attack", ATTACKS, ids=list(ATTACKS))
def test_it_refuses_to_send_to_an_internal_url(attack, empty_cluster, admin_member):
    host, where, kind = ATTACKS[attack]
    with _listening(where) as receiver:
        # Stored without the save-time check (e.g. before it existed): the send checks too.
        channel = NotificationChannel.objects.create(
            cluster=empty_cluster,
            name="hook",
            kind=ChannelKind.WEBHOOK,
            url=f"http://{host}:{receiver.port}/hook",
            secret=SECRET,
        )

        result = notification_channel_test(channel=channel, actor=admin_member)

    assert receiver.hits == []
    assert not result.ok and result.status_code is None
    assert result.error.startswith("refused:") and kind in result.error


def test_it_shows_the_refusal_as_an_admin_form_error(client, empty_cluster, admin_user):
    client.force_login(admin_user)
    form = {
        "cluster": empty_cluster.pk,
        "name": "meta",
        "kind": ChannelKind.SLACK,
        "url": "http://169.254.169.254/latest/meta-data/",
        "secret": "",
        "all_events": "on",
        "enabled": "on",
    }

    response = client.post("/admin/notifications/notificationchannel/add/", form)

    assert response.status_code == 200
    assert "is a link-local address" in response.content.decode()
    assert not NotificationChannel.objects.exists()


def test_it_sends_to_an_internal_network_the_allow_list_names(
    settings, empty_cluster, admin_member
):
    settings.NOTIFICATIONS_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    with receiver_running("127.0.0.1") as receiver:
        channel = notification_channel_create(
            cluster=empty_cluster,
            name="hook",
            kind=ChannelKind.WEBHOOK,
            url=f"http://{INTERNAL_NAME}:{receiver.port}/hook",
            secret=SECRET,
            actor=admin_member,
        )

        result = notification_channel_test(channel=channel, actor=admin_member)

    assert result.ok, result.error
    [hit] = receiver.hits
    # Connected to the checked address, still addressed to the name.
    assert hit.headers["Host"] == f"{INTERNAL_NAME}:{receiver.port}"
