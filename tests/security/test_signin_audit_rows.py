"""Failed sign-ins are counted, not written to the audit trail one by one: a spray of
made-up usernames must not grow the trail (or store what was typed as a username, which
may be a password), and a closed window leaves one row per real account with its count."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.audit.signin import signin_failures_audit

pytestmark = pytest.mark.django_db


def test_it_writes_no_audit_row_per_failed_sign_in(client, settings):
    User.objects.create_user("ursula", password="right-horse-battery")
    for n in range(12):
        client.post(
            "/accounts/login/",
            {"username": f"Secret-Typed-{n}", "password": "x"},
            REMOTE_ADDR=f"10.4.0.{n}",
        )
    for _ in range(3):
        client.post(
            "/accounts/login/", {"username": "ursula", "password": "x"}, REMOTE_ADDR="10.4.1.1"
        )
    assert AuditEvent.objects.count() == 0

    later = timezone.now() + timedelta(minutes=settings.SIGNIN_WINDOW_MINUTES)
    assert signin_failures_audit(at=later) == 2
    rows = {e.object_repr: e for e in AuditEvent.objects.filter(action="auth.login_failed")}
    assert set(rows) == {"ursula", "(unknown usernames)"}
    assert rows["ursula"].after["failures"] == 3
    assert rows["ursula"].client_address == "10.4.1.1"
    unknown = rows["(unknown usernames)"].after
    assert unknown["failures"] == 12 and unknown["unknown_usernames"] == 12
    assert "Secret-Typed" not in str(list(AuditEvent.objects.values_list("after", "object_repr")))
    # Summarised once.
    assert signin_failures_audit(at=later) == 0


def test_it_never_writes_an_unknown_username_into_a_lockout_row(client, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post(
            "/accounts/login/",
            {"username": "Secret-Typed-Password", "password": "x"},
            REMOTE_ADDR="10.4.2.1",
        )
    locked = AuditEvent.objects.get(action="auth.locked_out")
    assert locked.object_repr == "(unknown username)"
    assert "Secret-Typed" not in str(locked.after)
