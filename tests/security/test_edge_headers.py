"""Every page carries a Content-Security-Policy with neither inline script nor eval
allowed, and the HTTPS settings behind the TLS proxy redirect, set HSTS and mark the
cookies secure (but let probes and Prometheus in over plain HTTP)."""

import re

import pytest
from django.contrib.auth.models import User

pytestmark = pytest.mark.django_db

PAGES = ["/accounts/login/", "/", "/audit/", "/notifications/", "/api/docs/"]


def test_it_sends_a_strict_csp_on_every_page(client, admin_user):
    client.force_login(admin_user)
    for path in PAGES:
        response = client.get(path)
        assert response.status_code == 200, path
        policy = response["Content-Security-Policy"]
        script = re.search(r"script-src ([^;]*)", policy).group(1)
        style = re.search(r"style-src ([^;]*)", policy).group(1)
        assert "'unsafe-inline'" not in script + style and "'unsafe-eval'" not in script
        assert "'nonce-" in script, path
        assert "object-src 'none'" in policy and "frame-ancestors 'none'" in policy
        # Every inline script and style carries this response's nonce.
        nonce = re.search(r"'nonce-([^']+)'", script).group(1)
        html = response.content.decode()
        for tag in re.findall(r"<(?:script|style)\b[^>]*>", html):
            assert "src=" in tag or f'nonce="{nonce}"' in tag, (path, tag)
        assert not re.search(r"\son[a-z]+=\"", html), path
        assert ' style="' not in html, path


def test_it_redirects_to_https_and_sets_hsts_behind_the_proxy(client, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 31536000
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    plain = client.get("/accounts/login/")
    assert plain.status_code == 301 and plain["Location"].startswith("https://")
    assert client.get("/healthz").status_code == 200  # the probe is exempt

    secure = client.get("/accounts/login/", HTTP_X_FORWARDED_PROTO="https")
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"].startswith("max-age=31536000")
    User.objects.create_user("ursula", password="right-horse-battery")
    signed_in = client.post(
        "/accounts/login/",
        {"username": "ursula", "password": "right-horse-battery"},
        HTTP_X_FORWARDED_PROTO="https",
    )
    assert signed_in.status_code == 302
    assert signed_in.cookies["sessionid"]["secure"] and signed_in.cookies["csrftoken"]["secure"]
