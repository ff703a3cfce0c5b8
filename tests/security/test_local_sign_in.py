"""LOCAL_SIGN_IN=0 closes the break-glass path: no password form, and a password is
refused on the sign-in page, the admin and the API token endpoint, a superuser's too."""

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

PASSWORD = "root-password-1"


@pytest.fixture
def root():
    return User.objects.create_superuser("root", password=PASSWORD)


def test_it_signs_in_with_a_password_while_local_sign_in_is_on(client, root):
    assert b'name="password"' in client.get("/accounts/login/").content
    response = client.post("/accounts/login/", {"username": "root", "password": PASSWORD})
    assert response.status_code == 302 and "_auth_user_id" in client.session


def test_it_refuses_every_password_sign_in_while_local_sign_in_is_off(client, root, settings):
    settings.LOCAL_SIGN_IN = False
    credentials = {"username": "root", "password": PASSWORD}

    assert b'name="password"' not in client.get("/accounts/login/").content
    assert client.post("/accounts/login/", credentials).status_code == 403
    client.post("/admin/login/?next=/admin/", credentials)
    assert APIClient().post("/api/auth/token/", credentials).status_code == 400
    assert "_auth_user_id" not in client.session


def test_it_never_hands_a_local_account_to_a_provider_user_of_its_name(root, settings):
    from apps.access.oidc_backend import GrantingOIDCBackend

    settings.OIDC_RP_CLIENT_ID = "x"
    settings.OIDC_OP_TOKEN_ENDPOINT = settings.OIDC_OP_USER_ENDPOINT = "http://127.0.0.1:1/"
    settings.OIDC_OP_JWKS_ENDPOINT = "http://127.0.0.1:1/"
    backend = GrantingOIDCBackend()

    claims = {"preferred_username": "root", "groups": []}
    assert not backend.filter_users_by_claims(claims).exists()
    assert backend.create_user(claims) is None
