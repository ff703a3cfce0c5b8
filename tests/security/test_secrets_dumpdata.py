"""`manage.py dumpdata` carries no secret in plain text: not a channel's URL token or
signing secret, not an API token, not a cluster password."""

import io

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from apps.notifications.models import ChannelKind, NotificationChannel
from tests.support.factories import user_make

pytestmark = pytest.mark.django_db

URL_TOKEN = "XXXXurlTokenXXXX"
SECRET = "s3cret-signing-key-0123456789abcdef"
PASSWORD = "s3cret-pass-for-the-bot"
SASL_PASSWORD = "sasl-Passw0rd-in-dump"


def test_it_dumps_no_secret_in_plain_text(cluster):
    NotificationChannel.objects.create(
        cluster=cluster,
        name="hook",
        kind=ChannelKind.WEBHOOK,
        url=f"https://hooks.example.com/in/{URL_TOKEN}?key=querySecret",
        secret=SECRET,
    )
    cluster.sasl_password = SASL_PASSWORD
    cluster.save()
    user_make("bot", "viewer", password=PASSWORD)
    key = APIClient().post("/api/auth/token/", {"username": "bot", "password": PASSWORD})
    key = key.json()["token"]
    out = io.StringIO()

    call_command("dumpdata", stdout=out)

    dump = out.getvalue()
    assert "hooks.example.com" not in dump  # the URL is sealed whole
    for secret in (URL_TOKEN, "querySecret", SECRET, key, SASL_PASSWORD):
        assert secret not in dump
