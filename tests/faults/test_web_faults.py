"""The web server (Daphne) restarted under an open dashboard: the page reconnects on its
own and shows what happens afterwards without a reload. acks=all traffic runs alongside
(Kafka is not touched: it must stay whole)."""

import shutil
import tempfile
import time
from pathlib import Path

import pytest
from devkit.users import user_make

from apps.clusters.models import Cluster
from tests.faults.site import Site
from tests.support.factories import SKEWED, cluster_make, plan_make

pytestmark = [pytest.mark.browser, pytest.mark.integration]

PASSWORD = "faults-test-pass"


@pytest.fixture(scope="module")
def site(redis_server, django_db_blocker):
    workdir = Path(tempfile.mkdtemp(prefix="it-faults-web-"))
    site = Site(workdir, redis_server)
    with django_db_blocker.unblock():
        site.migrate()
        site.daphne_start()
        try:
            yield site
        finally:
            site.stop()
            shutil.rmtree(workdir, ignore_errors=True)


def _world() -> int:
    cluster = cluster_make("prod", SKEWED)
    user_make("vic", "viewer", password=PASSWORD)
    user_make("anna", "approver", password=PASSWORD)
    return plan_make(Cluster.objects.get(pk=cluster.pk)).pk


def test_it_reconnects_an_open_dashboard_when_the_web_server_restarts(
    site, sign_in, side_traffic, fault_row, fault_survived
):
    fault_row["fault"] = "web server (Daphne) restarted"
    plan_id = site.call(_world)
    url = site.url(f"/clusters/prod/plans/{plan_id}/")
    watcher = sign_in("vic", PASSWORD)
    watcher.goto(url)
    watcher.wait_for_selector('#live-status[data-state="live"]')
    watcher.evaluate("() => { window.notReloaded = true; }")

    stopped = time.monotonic()
    site.daphne_stop()
    watcher.wait_for_selector('#live-status:not([data-state="live"])', timeout=15_000)
    site.daphne_start()
    # live.js retries with backoff (1 s, doubling, jittered): back within a few seconds.
    watcher.wait_for_selector('#live-status[data-state="live"]', timeout=60_000)
    recovered = time.monotonic() - stopped

    # What happens after the restart reaches the open page, without a reload.
    approver = sign_in("anna", PASSWORD)
    approver.goto(url)
    approver.fill('form[data-action="approve"] input[name="reason"]', "after the restart")
    approver.click("#approve-button")
    approver.wait_for_selector('#plan-state-badge[data-state="approved"]')
    watcher.wait_for_selector('#plan-state-badge[data-state="approved"]', timeout=15_000)
    assert watcher.evaluate("() => window.notReloaded") is True
    assert watcher.js_errors == []

    counts = side_traffic.finish()
    fault_survived(
        counts,
        recovered=recovered,
        recovery="stop → the open page live again (restart included)",
        said=f"page live again {recovered:.1f} s after Daphne stopped",
    )
