"""Behind a reverse proxy every request comes from the proxy's address: lockouts must be
keyed on the client the proxy forwarded (TRUSTED_PROXIES), or one guesser locks out
everyone; and without trusted proxies, X-Forwarded-For is the client's own word."""

import pytest
from django.contrib.auth.models import User

from apps.audit.models import AuditEvent

pytestmark = pytest.mark.django_db

PASSWORD = "right-horse-battery"
PROXY = "10.0.0.254"


@pytest.fixture
def admin(settings) -> User:
    settings.SIGNIN_USERNAME_FAILURE_LIMIT = 100  # only the per-address lockout here
    return User.objects.create_user("root-admin", password=PASSWORD, is_staff=True)


def sign_in(client, password: str, forwarded_for: str | None):
    extra = {"HTTP_X_FORWARDED_FOR": forwarded_for} if forwarded_for else {}
    return client.post(
        "/accounts/login/",
        {"username": "root-admin", "password": password},
        REMOTE_ADDR=PROXY,
        **extra,
    )


def test_it_does_not_let_a_guesser_behind_the_proxy_lock_out_the_admin(client, admin, settings):
    settings.TRUSTED_PROXIES = 1
    for _ in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, "guess", forwarded_for="198.51.100.7")
    assert sign_in(client, "guess", forwarded_for="198.51.100.7").status_code == 429

    assert sign_in(client, PASSWORD, forwarded_for="203.0.113.5").status_code == 302
    locked = AuditEvent.objects.get(action="auth.locked_out")
    assert locked.client_address == "198.51.100.7"
    login = AuditEvent.objects.get(action="auth.login")
    assert login.client_address == "203.0.113.5"


def test_it_takes_the_address_the_proxy_wrote_not_the_clients_claims(client, admin, settings):
    settings.TRUSTED_PROXIES = 1
    # The guesser writes a new X-Forwarded-For each time; the proxy appends the real one.
    for n in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, "guess", forwarded_for=f"192.0.2.{n}, 198.51.100.7")
    assert sign_in(client, PASSWORD, forwarded_for="192.0.2.99, 198.51.100.7").status_code == 429


def test_it_ignores_x_forwarded_for_without_trusted_proxies(client, admin, settings):
    settings.TRUSTED_PROXIES = 0
    for n in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, "guess", forwarded_for=f"192.0.2.{n}")
    assert sign_in(client, PASSWORD, forwarded_for="192.0.2.99").status_code == 429
    assert AuditEvent.objects.get(action="auth.locked_out").client_address == PROXY
