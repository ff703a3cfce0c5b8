"""DNS rebinding: a name that answers a public address first and 127.0.0.1 next never
gets a request to 127.0.0.1. The address checked is the one connected to: no second
lookup, and no fallback to another address of the same answer."""

import socket

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

NAME = "rebind.example.test"
# 127.0.0.2 plays the public address: the allow-list names it, and only it.
PUBLIC = "127.0.0.2"
SECRET = "s3cret-signing-key-0123456789abcdef"


@pytest.fixture(autouse=True)
def _settings(settings):
    settings.NOTIFICATIONS_ALLOWED_NETWORKS = [f"{PUBLIC}/32"]
    settings.NOTIFICATIONS_TEST_TIMEOUT = 0.5


def _port_free_on(host: str, port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def test_it_never_falls_back_to_the_internal_address_of_an_answer(monkeypatch, empty_cluster):
    admin_member = user_make("ada", "admin")
    with receiver_running("127.0.0.1") as internal:
        # One answer, public first: a client that tries the next address when the first
        # refuses the connection (nothing listens on 127.0.0.2 at that port) lands inside.
        assert _port_free_on(PUBLIC, internal.port)
        resolver_patch(monkeypatch, {NAME: [[PUBLIC, "127.0.0.1"]]})
        url = f"http://{NAME}:{internal.port}/hook"
        channel = NotificationChannel.objects.create(
            cluster=empty_cluster, name="hook", kind=ChannelKind.WEBHOOK, url=url, secret=SECRET
        )

        result = notification_channel_test(channel=channel, actor=admin_member)

        assert internal.hits == []
        assert not result.ok and "loopback" in result.error
        with pytest.raises(NotificationChannelInvalid, match="127.0.0.1"):
            notification_channel_create(
                cluster=empty_cluster,
                name="hook-2",
                kind=ChannelKind.WEBHOOK,
                url=url,
                secret=SECRET,
                actor=admin_member,
            )


def test_it_connects_to_the_address_it_checked(monkeypatch, empty_cluster):
    admin_member = user_make("ada", "admin")
    with receiver_running(PUBLIC) as public:
        assert _port_free_on("127.0.0.1", public.port)
        with receiver_running("127.0.0.1", public.port) as internal:
            # Public on the first lookup, 127.0.0.1 on every later one.
            looked_up = resolver_patch(monkeypatch, {NAME: [[PUBLIC], ["127.0.0.1"]]})
            channel = NotificationChannel.objects.create(
                cluster=empty_cluster,
                name="hook",
                kind=ChannelKind.WEBHOOK,
                url=f"http://{NAME}:{public.port}/hook",
                secret=SECRET,
            )

            result = notification_channel_test(channel=channel, actor=admin_member)

    assert result.ok, result.error
    assert internal.hits == []
    [hit] = public.hits
    assert hit.headers["Host"] == f"{NAME}:{public.port}"
    assert looked_up == [NAME]
