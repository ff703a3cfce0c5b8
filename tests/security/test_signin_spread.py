"""Guesses spread over many addresses: each (username, address) pair stays under the
lockout, so failures are also counted per username over all addresses, and past
SIGNIN_USERNAME_FAILURE_LIMIT the name gets one attempt per SIGNIN_USERNAME_DELAY_SECONDS."""

import pytest
from django.contrib.auth.models import User

from apps.audit.models import AuditEvent
from scripts.devkit.polling import wait_until

pytestmark = pytest.mark.django_db

PASSWORD = "right-horse-battery"


@pytest.fixture
def user(settings) -> User:
    settings.AXES_FAILURE_LIMIT = 5
    settings.SIGNIN_USERNAME_FAILURE_LIMIT = 10
    settings.SIGNIN_USERNAME_DELAY_SECONDS = 60
    return User.objects.create_user("ursula", password=PASSWORD)


def sign_in(client, password: str, address: str, username: str = "ursula"):
    return client.post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address
    )


def test_it_slows_sixteen_guesses_over_four_addresses(client, user):
    answers = [
        sign_in(client, f"guess-{n}", address=f"10.1.0.{n % 4}").status_code for n in range(16)
    ]
    # 4 per address: no pair reaches its lockout; the 11th guess on is refused.
    assert answers[:10] == [200] * 10
    assert answers[10:] == [429] * 6
    # Refused outright, right password or not, from a fresh address too.
    assert sign_in(client, PASSWORD, address="10.1.0.9").status_code == 429
    assert "_auth_user_id" not in client.session
    locked = AuditEvent.objects.get(action="auth.locked_out")
    assert locked.after == {"username": "ursula", "scope": "username", "failures": 10}
    # Another name is not affected.
    User.objects.create_user("victor", password=PASSWORD)
    assert sign_in(client, PASSWORD, address="10.1.0.9", username="victor").status_code == 302


def test_it_lets_one_attempt_through_per_delay(client, user, settings):
    settings.SIGNIN_USERNAME_DELAY_SECONDS = 1
    for n in range(10):
        sign_in(client, f"guess-{n}", address=f"10.2.0.{n % 4}")
    # Refused attempts do not count, so the right password gets in once the delay is over.
    wait_until(
        lambda: sign_in(client, PASSWORD, address="10.2.0.9").status_code == 302,
        timeout=15,
        interval=0.2,
        what="a sign-in after the per-username delay",
    )


def test_it_never_locks_the_right_password_out_from_another_address(client, user, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, "guess", address="10.3.0.1")
    assert sign_in(client, PASSWORD, address="10.3.0.1").status_code == 429
    assert sign_in(client, PASSWORD, address="10.3.0.2").status_code == 302
