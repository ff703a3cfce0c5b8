"""Sign-in abuse: repeated failures lock a name out from that address (django-axes),
on the sign-in page and the API's token endpoint alike, and are audited; API tokens are
audited when issued and can be revoked, by their owner or an admin."""

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from apps.api.models import ApiToken
from apps.api.services import token_create
from apps.audit.models import AuditEvent

pytestmark = pytest.mark.django_db

PASSWORD = "right-horse-battery"


@pytest.fixture
def user() -> User:
    return User.objects.create_user("ursula", password=PASSWORD)


def sign_in(client, password: str, address: str = "10.0.0.1"):
    return client.post(
        "/accounts/login/",
        {"username": "ursula", "password": password},
        REMOTE_ADDR=address,
    )


def test_it_locks_out_a_name_after_repeated_failures_and_audits_it(client, user, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert sign_in(client, "wrong").status_code == 200  # the form again, with an error
    assert sign_in(client, "wrong").status_code == 429

    # Locked out: even the right password is refused, and no session is opened.
    response = sign_in(client, PASSWORD)
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    # Another address is not locked out.
    assert sign_in(client, PASSWORD, address="10.0.0.2").status_code == 302

    # The lockout is audited once, when it begins; the attempts it refused are not.
    locked = AuditEvent.objects.get(action="auth.locked_out")
    assert locked.after == {"username": "ursula"} and locked.client_address == "10.0.0.1"
    assert PASSWORD not in str(list(AuditEvent.objects.values_list("after", flat=True)))


def test_it_resets_the_count_after_a_success(client, user, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        sign_in(client, "wrong")
    assert sign_in(client, PASSWORD).status_code == 302
    client.logout()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert sign_in(client, "wrong").status_code == 200
    assert not AuditEvent.objects.filter(action="auth.locked_out").exists()


def test_it_locks_out_the_token_endpoint_too(user, settings):
    api = APIClient(REMOTE_ADDR="10.0.0.3")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        api.post("/api/auth/token/", {"username": "ursula", "password": "wrong"})
    response = api.post("/api/auth/token/", {"username": "ursula", "password": PASSWORD})
    assert response.status_code == 429
    assert not ApiToken.objects.filter(user=user).exists()


def test_it_audits_a_token_issued_and_revoked_by_its_owner(user):
    api = APIClient()
    response = api.post("/api/auth/token/", {"username": "ursula", "password": PASSWORD})
    assert response.status_code == 200
    key = response.json()["token"]
    # Asking again issues a new token, which replaces the first (only digests are kept).
    again = api.post("/api/auth/token/", {"username": "ursula", "password": PASSWORD})
    assert again.json()["token"] != key
    key = again.json()["token"]
    created = AuditEvent.objects.filter(action="auth.token_created")
    assert created.count() == 2 and {e.actor for e in created} == {"ursula"}
    assert ApiToken.objects.filter(user=user).count() == 1

    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.post("/api/auth/token/revoke/").status_code == 204
    assert api.post("/api/auth/token/revoke/").status_code == 401  # the key is gone
    api.credentials()
    assert not ApiToken.objects.filter(user=user).exists()
    revoked = AuditEvent.objects.get(action="auth.token_revoked")
    assert revoked.actor == "ursula" and revoked.object_repr == "ursula"
    assert key not in str(list(AuditEvent.objects.values_list("after", "reason", "object_repr")))


def test_it_answers_404_to_revoking_without_a_token(user):
    api = APIClient()
    api.force_authenticate(user)
    assert api.post("/api/auth/token/revoke/").status_code == 404
    assert not AuditEvent.objects.filter(action="auth.token_revoked").exists()


def test_an_admin_revokes_a_token_in_the_admin_and_it_is_audited(client, user, admin_user):
    token_create(user=user)
    client.force_login(admin_user)
    url = f"/admin/api/apitoken/{user.api_token.pk}/delete/"
    response = client.post(url, {"post": "yes"})
    assert response.status_code == 302, response.content.decode()[:3000]
    assert response["Location"] == "/admin/api/apitoken/", response["Location"]
    assert not ApiToken.objects.filter(user=user).exists()
    revoked = AuditEvent.objects.get(action="auth.token_revoked")
    assert revoked.actor == admin_user.username and revoked.object_repr == "ursula"
