"""Notification secrets (a channel's URL with its token, a webhook's signing secret) are
sealed under BALANCER_SECRET_KEYS like cluster secrets, and `rotate_secrets` re-seals
them with the first key, after which the old key can go."""

import io

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.db import connection

from apps.notifications.models import ChannelKind, NotificationChannel

pytestmark = pytest.mark.django_db

OLD, NEW = Fernet.generate_key().decode(), Fernet.generate_key().decode()
URL = "https://hooks.example.com/services/T0000/B0000/XXXXtokenXXXX"
SECRET = "s3cret-signing-key-0123456789abcdef"


def stored(channel: NotificationChannel) -> tuple[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT url, secret FROM notifications_notificationchannel WHERE id = %s",
            [channel.pk],
        )
        return cursor.fetchone()


def test_it_re_seals_notification_secrets_with_the_first_key(settings, empty_cluster):
    settings.BALANCER_SECRET_KEYS = [OLD]
    channel = NotificationChannel.objects.create(
        cluster=empty_cluster, name="hook", kind=ChannelKind.WEBHOOK, url=URL, secret=SECRET
    )
    assert [Fernet(OLD).decrypt(v.encode()).decode() for v in stored(channel)] == [URL, SECRET]

    settings.BALANCER_SECRET_KEYS = [NEW, OLD]
    call_command("rotate_secrets", stdout=io.StringIO())

    assert [Fernet(NEW).decrypt(v.encode()).decode() for v in stored(channel)] == [URL, SECRET]
    settings.BALANCER_SECRET_KEYS = [NEW]  # the old key can go
    fresh = NotificationChannel.objects.get(pk=channel.pk)
    assert (fresh.url, fresh.secret) == (URL, SECRET)
