"""An admin registers the dev cluster in the dashboard in headless Chromium: Test
connection passes, the cluster is saved; a wrong bootstrap list names the failed step and
a malformed one is refused, both leaving what is stored as it was."""

import pytest
from devkit.users import user_make

from apps.audit.models import AuditEvent
from apps.clusters.models import Cluster
from tests.browser.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.integration]

PASSWORD = "browser-admin-pass"


def stored(name: str) -> str | None:
    cluster = Cluster.objects.filter(name=name).first()
    return cluster.bootstrap_servers if cluster else None


def test_an_admin_adds_the_dev_cluster_after_testing_the_connection(site, sign_in, kafka_cluster):
    site.call(user_make, "ada", "admin", password=PASSWORD)
    page = sign_in("ada", PASSWORD)
    page.click("#add-cluster")
    page.fill("#id_name", "dev")
    page.fill("#id_bootstrap_servers", kafka_cluster.bootstrap_servers)
    page.click("#test-connection")
    page.wait_for_selector('#connection-check[data-ok="true"]')
    assert page.locator('tr[data-step="authorization"]').get_attribute("data-ok") == "true"
    assert site.call(stored, "dev") is None  # testing stores nothing
    screenshot(page, "cluster-test-connection")

    page.click("#save-cluster")
    page.wait_for_url(site.url("/clusters/dev/"))
    assert site.call(stored, "dev") == kafka_cluster.bootstrap_servers
    assert site.call(lambda: AuditEvent.objects.filter(action="cluster.created").count()) == 1

    # A wrong address: the failing step and the socket's error, and nothing changes.
    page.click("#edit-cluster")
    page.fill("#id_bootstrap_servers", "127.0.0.1:1")
    page.click("#test-connection")
    page.wait_for_selector('#connection-check[data-ok="false"]')
    summary = page.inner_text("#connection-check-summary")
    assert "Connection failed at step: TCP" in summary and "Connection refused" in summary

    # Not a bootstrap list at all: refused on the form, for Save as for Test.
    page.fill("#id_bootstrap_servers", "this is not a bootstrap list")
    page.click("#save-cluster")
    page.wait_for_selector("text=is not host:port")
    assert site.call(stored, "dev") == kafka_cluster.bootstrap_servers
    assert not page.js_errors
