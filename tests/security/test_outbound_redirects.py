"""A receiver the allow-list lets through answers with a redirect to an internal address:
the redirect is not followed (the internal receiver gets nothing), and the failure shows
its status, not the answer's body."""

import pytest
from devkit.users import user_make

from apps.notifications.models import ChannelKind
from apps.notifications.services.channels import (
    notification_channel_create,
    notification_channel_test,
)
from tests.support.http_receivers import Reply, receiver_running

pytestmark = pytest.mark.django_db

# 127.0.0.2 plays the public receiver: the allow-list names it, and only it.
FIRST_HOP = "127.0.0.2"
INTERNAL_PAGE = "internal admin page: db_password=hunter2"


def test_it_does_not_follow_a_redirect_to_an_internal_address(settings, empty_cluster):
    settings.NOTIFICATIONS_ALLOWED_NETWORKS = [f"{FIRST_HOP}/32"]
    settings.NOTIFICATIONS_TEST_TIMEOUT = 0.5
    admin_member = user_make("ada", "admin")
    with (
        receiver_running("127.0.0.1") as internal,
        receiver_running(FIRST_HOP) as first,
    ):
        internal.reply = Reply(200, INTERNAL_PAGE.encode())
        first.reply = Reply(
            302,
            f"redirecting to {INTERNAL_PAGE}".encode(),
            {"Location": f"http://127.0.0.1:{internal.port}/admin"},
        )
        channel = notification_channel_create(
            cluster=empty_cluster,
            name="hook",
            kind=ChannelKind.SLACK,
            url=f"http://{FIRST_HOP}:{first.port}/services/T0/B0/token",
            actor=admin_member,
        )

        result = notification_channel_test(channel=channel, actor=admin_member)

    assert len(first.hits) == 1
    assert internal.hits == []
    assert not result.ok and result.status_code == 302
    assert result.error.startswith("HTTP 302")
    assert "hunter2" not in result.error and "internal admin" not in result.error
