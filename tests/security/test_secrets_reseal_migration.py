"""The migration that moves notification secrets from the key derived from
DJANGO_SECRET_KEY to BALANCER_SECRET_KEYS: what the old key sealed reads the same
afterwards, and is sealed under the new keys only."""

import base64
import hashlib
from importlib import import_module
from types import SimpleNamespace

import pytest
from cryptography.fernet import Fernet, InvalidToken
from django.apps import apps
from django.conf import settings
from django.db import connection

from apps.notifications.models import ChannelKind, NotificationChannel

pytestmark = pytest.mark.django_db

KEY = Fernet.generate_key().decode()
URL = "https://hooks.example.com/services/T0000/B0000/XXXXtokenXXXX"
SECRET = "s3cret-signing-key-0123456789abcdef"
MIGRATION = "apps.notifications.migrations.0004_reseal_under_balancer_secret_keys"


def _old_key_fernet() -> Fernet:
    # The key notifications sealed with before: derived from DJANGO_SECRET_KEY.
    digest = hashlib.sha256(b"kafka-balancer/notifications/" + settings.SECRET_KEY.encode())
    return Fernet(base64.urlsafe_b64encode(digest.digest()))


def _columns(pk: int) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT url, secret FROM notifications_notificationchannel WHERE id = %s", [pk]
        )
        return list(cursor.fetchone())


def test_it_re_seals_what_the_old_key_sealed_under_balancer_secret_keys(settings, empty_cluster):
    settings.BALANCER_SECRET_KEYS = [KEY]
    channel = NotificationChannel.objects.create(
        cluster=empty_cluster, name="hook", kind=ChannelKind.WEBHOOK, url="x", secret="y"
    )
    old = _old_key_fernet()
    sealed_by_old = [old.encrypt(URL.encode()).decode(), old.encrypt(SECRET.encode()).decode()]
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE notifications_notificationchannel SET url = %s, secret = %s WHERE id = %s",
            [*sealed_by_old, channel.pk],
        )

    # The migration only runs SQL through the editor's connection.
    import_module(MIGRATION).forwards(apps, SimpleNamespace(connection=connection))

    values = _columns(channel.pk)
    assert [Fernet(KEY).decrypt(v.encode()).decode() for v in values] == [URL, SECRET]
    for value in values:
        with pytest.raises(InvalidToken):
            old.decrypt(value.encode())
    fresh = NotificationChannel.objects.get(pk=channel.pk)
    assert (fresh.url, fresh.secret) == (URL, SECRET)
