"""Single sign-on against a real OpenID Connect provider: django-oidc-provider in a
second Django process (tests/support/oidc_provider), signed in through its own login
page in Chromium. The groups it claims become grants; a group taken away at the
provider takes its grant away at the next sign-in. Local sign-in is off here: the
password form is hidden and a password refused."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from devkit.polling import wait_until

from tests.browser.conftest import ROOT, free_port, live_site_run

pytestmark = [pytest.mark.browser, pytest.mark.integration]

CLIENT_ID = "kafka-balancer"
CLIENT_SECRET = "test-client-secret-of-the-sso-test"
GROUP_GRANTS = "kafka-admins=admin@*,team-a=operator@prod,team-a=viewer@*"
USER, PASSWORD = "alice", "alice-at-the-provider"


@dataclass
class Provider:
    url: str
    env: dict[str, str]

    def manage(self, *args: str) -> None:
        subprocess.run(
            [sys.executable, "-m", "django", *args],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
            timeout=120,
        )

    def user_set(self, *, groups: str, redirect_uri: str) -> None:
        self.manage(
            "provider_user",
            f"--username={USER}",
            f"--password={PASSWORD}",
            f"--groups={groups}",
            f"--client-id={CLIENT_ID}",
            f"--client-secret={CLIENT_SECRET}",
            f"--redirect-uri={redirect_uri}",
        )


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    workdir = Path(tempfile.mkdtemp(prefix="it-oidc-provider-"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.support.oidc_provider.settings",
        "OIDC_PROVIDER_DB": str(workdir / "provider.sqlite3"),
    }
    port = free_port()
    op = Provider(url=f"http://127.0.0.1:{port}", env=env)
    op.manage("migrate", "-v0")
    op.manage("creatersakey")
    log = open(workdir / "provider.log", "wb")  # noqa: SIM115 - closed below
    server = subprocess.Popen(
        [sys.executable, "-m", "django", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_until(lambda: _answers(op.url + "/openid/jwks"), timeout=60, what="the OIDC provider")
        yield op
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="module")
def site(redis_server: str, django_db_blocker, provider: Provider):
    port = free_port()
    provider.user_set(
        groups="team-a,kafka-admins", redirect_uri=f"http://127.0.0.1:{port}/oidc/callback/"
    )
    op = provider.url + "/openid"
    env = {
        "LOCAL_SIGN_IN": "0",
        "OIDC_RP_CLIENT_ID": CLIENT_ID,
        "OIDC_RP_CLIENT_SECRET": CLIENT_SECRET,
        "OIDC_OP_AUTHORIZATION_ENDPOINT": op + "/authorize",
        "OIDC_OP_TOKEN_ENDPOINT": op + "/token",
        "OIDC_OP_USER_ENDPOINT": op + "/userinfo",
        "OIDC_OP_JWKS_ENDPOINT": op + "/jwks",
        "OIDC_GROUP_GRANTS": GROUP_GRANTS,
    }
    with live_site_run(redis_server, django_db_blocker, extra_env=env, port=port) as live:
        yield live


def _clusters_make() -> None:
    from apps.clusters.models import Cluster

    for name in ("prod", "staging"):
        Cluster.objects.get_or_create(name=name, defaults={"bootstrap_servers": "127.0.0.1:1"})


def _oidc_grants() -> set[tuple[str, str]]:
    from apps.access.models import Grant

    return {
        (g.role, g.cluster.name if g.cluster_id else "*")
        for g in Grant.objects.filter(user__username=USER, source="oidc").select_related("cluster")
    }


def _applied_audits() -> int:
    from apps.audit.models import AuditEvent

    return AuditEvent.objects.filter(action="grant.oidc_applied", actor=USER).count()


def sso_sign_in(browser, site, provider: Provider):
    context = browser.new_context()
    page = context.new_page()
    page.goto(site.url("/accounts/login/"))
    assert page.locator("input[name=password]").count() == 0  # local sign-in is off
    page.click("#sso")
    page.wait_for_url(provider.url + "/accounts/login/**")
    page.fill("#op-username", USER)
    page.fill("#op-password", PASSWORD)
    page.click("#op-sign-in")
    page.wait_for_url(site.url("/"))
    return context, page


def test_it_signs_in_with_the_providers_groups_and_drops_a_group_taken_away(
    site, provider, browser
):
    site.call(_clusters_make)

    context, page = sso_sign_in(browser, site, provider)
    assert page.locator("header").inner_text().count(USER) == 1
    assert site.call(_oidc_grants) == {("admin", "*"), ("operator", "prod"), ("viewer", "*")}
    assert page.locator("header a", has_text="Access").count() == 1  # an admin's page
    assert page.goto(site.url("/access/")).status == 200
    context.close()

    # The provider takes kafka-admins away: the next sign-in drops the admin grant.
    provider.user_set(groups="team-a", redirect_uri=site.url("/oidc/callback/"))
    context, page = sso_sign_in(browser, site, provider)
    assert site.call(_oidc_grants) == {("operator", "prod"), ("viewer", "*")}
    assert page.locator("header a", has_text="Access").count() == 0
    assert page.goto(site.url("/access/")).status == 403
    assert page.goto(site.url("/clusters/prod/")).status == 200
    context.close()
    assert site.call(_applied_audits) == 2


def test_it_refuses_a_password_with_local_sign_in_off(site):
    from django.contrib.auth.models import User

    site.call(
        lambda: (
            User.objects.filter(username="root").exists()
            or User.objects.create_superuser("root", password="root-password-1")
        )
    )
    request = urllib.request.Request(
        site.url("/api/auth/token/"),
        data=b"username=root&password=root-password-1",
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 400
