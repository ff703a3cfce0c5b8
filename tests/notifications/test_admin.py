"""Channels in the Django admin: through the audited services, URL and secret write-only."""

import pytest
from devkit.users import user_make

from apps.audit.models import AuditEvent
from apps.notifications.models import ChannelKind, NotificationChannel
from tests.notifications.conftest import SECRET, SLACK_PATH

pytestmark = pytest.mark.django_db
ADD = "/admin/notifications/notificationchannel/add/"


@pytest.fixture
def staff_admin(db):
    user = user_make("ada", "admin")
    user.is_staff = True
    user.save()
    return user


def form(**overrides) -> dict:
    return {
        "name": "ops",
        "kind": ChannelKind.SLACK,
        "url": f"https://hooks.example.com{SLACK_PATH}",
        "secret": "",
        "all_events": "on",
        "enabled": "on",
    } | overrides


def test_it_creates_a_channel_through_the_audited_service(client, empty_cluster, staff_admin):
    client.force_login(staff_admin)

    response = client.post(ADD, form(cluster=empty_cluster.pk))

    assert response.status_code == 302
    channel = NotificationChannel.objects.get()
    assert channel.url == f"https://hooks.example.com{SLACK_PATH}"
    assert AuditEvent.objects.filter(action="notification_channel.created").count() == 1


def test_it_shows_the_service_refusal_as_a_form_error(client, empty_cluster, staff_admin):
    client.force_login(staff_admin)

    response = client.post(
        ADD, form(cluster=empty_cluster.pk, kind=ChannelKind.WEBHOOK, secret="x")
    )

    assert response.status_code == 200
    assert "at least 16 characters" in response.content.decode()
    assert not NotificationChannel.objects.exists()


def test_it_never_shows_the_url_or_secret_and_keeps_them_when_left_empty(
    client, empty_cluster, staff_admin
):
    channel = NotificationChannel.objects.create(
        cluster=empty_cluster,
        name="ops",
        kind=ChannelKind.WEBHOOK,
        url=f"https://hooks.example.com{SLACK_PATH}",
        secret=SECRET,
    )
    client.force_login(staff_admin)
    change = f"/admin/notifications/notificationchannel/{channel.pk}/change/"

    pages = (
        client.get(change).content.decode()
        + client.get("/admin/notifications/notificationchannel/").content.decode()
    )
    response = client.post(change, form(url="", secret="", name="ops-renamed"))

    assert "XXXXtokenXXXX" not in pages and SECRET not in pages
    assert "hooks.example.com" in pages
    assert response.status_code == 302
    channel.refresh_from_db()
    assert (channel.name, channel.url, channel.secret) == (
        "ops-renamed",
        f"https://hooks.example.com{SLACK_PATH}",
        SECRET,
    )
    assert AuditEvent.objects.get(action="notification_channel.changed").before["name"] == "ops"
