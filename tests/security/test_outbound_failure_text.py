"""A refused test send shows the HTTP status, never the body of the answer (an internal
page read through a webhook would come back to the operator), on the page, in the
delivery log and in the audit trail."""

import pytest
from devkit.users import user_make

from apps.audit.models import AuditEvent
from apps.notifications.models import ChannelKind, NotificationChannel
from tests.support.http_receivers import Reply, receiver_running

pytestmark = pytest.mark.django_db

PAGE = "Jenkins internal console: AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI"


def test_it_shows_the_status_of_a_failed_test_and_not_the_body(client, settings, empty_cluster):
    settings.NOTIFICATIONS_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    client.force_login(user_make("ada", "admin"))
    with receiver_running("127.0.0.1") as receiver:
        receiver.reply = Reply(403, PAGE.encode())
        channel = NotificationChannel.objects.create(
            cluster=empty_cluster,
            name="hook",
            kind=ChannelKind.SLACK,
            url=f"http://127.0.0.1:{receiver.port}/services/T0/B0/token",
        )

        page = client.post(f"/notifications/{channel.pk}/test/", follow=True).content.decode()

    assert len(receiver.hits) == 1
    audit = AuditEvent.objects.get(action="notification_channel.tested")
    for shown in (page, str(audit.after), str(audit.reason)):
        assert "Jenkins" not in shown and "wJalrXUtnFEMI" not in shown
    assert "prod/hook: test not delivered: HTTP 403 Forbidden" in page
