"""A disabled channel is sent nothing, the "Send test" button included: the operator
reads why instead."""

import pytest
from devkit.users import user_make

from apps.notifications.models import ChannelKind, NotificationChannel
from tests.support.http_receivers import receiver_running

pytestmark = pytest.mark.django_db


def test_it_sends_no_test_to_a_disabled_channel(client, settings, empty_cluster):
    settings.NOTIFICATIONS_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    client.force_login(user_make("ada", "admin"))
    with receiver_running("127.0.0.1") as receiver:
        channel = NotificationChannel.objects.create(
            cluster=empty_cluster,
            name="off",
            kind=ChannelKind.SLACK,
            url=f"http://127.0.0.1:{receiver.port}/services/T0/B0/token",
            enabled=False,
        )

        response = client.post(f"/notifications/{channel.pk}/test/", follow=True)

    assert receiver.hits == []
    assert "prod/off: test not delivered: the channel is disabled" in response.content.decode()
