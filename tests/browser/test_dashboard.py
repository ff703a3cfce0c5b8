"""The dashboard in headless Chromium against a live Daphne: sign in, the heatmap and
charts with the right brokers and live updates, plan approval seen live in another
browser, and a viewer's forged approval refused and audited."""

from datetime import timedelta

import pytest
from devkit.users import user_make
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.clusters.models import Cluster
from apps.dashboard.events import cluster_changed_send, loads_changed_send
from apps.metrics.selectors import cluster_state_stamp
from apps.plans.models import Plan
from tests.browser.conftest import screenshot
from tests.support.factories import (
    SKEWED,
    cluster_apply,
    cluster_make,
    loads_make,
    plan_make,
)

pytestmark = [pytest.mark.browser, pytest.mark.integration]

PASSWORD = "browser-test-pass"
# SKEWED plus a few topics, so the heatmap and the screenshots look like a cluster.
ASSIGNMENT = {
    **SKEWED,
    **{("payments", i): [1 + i % 3, 1 + (i + 1) % 3, 1 + (i + 2) % 3] for i in range(6)},
    **{("clicks", i): [1 + i % 2, 3] if i % 3 else [2, 1] for i in range(9)},
    **{("inventory", i): [2, 1] for i in range(4)},
}
TOPICS = sorted({t for t, _ in ASSIGNMENT})
WINDOWS = 12


def world_build() -> dict:
    cluster = cluster_make("prod", ASSIGNMENT)
    user_make("vic", "viewer", password=PASSWORD)
    user_make("anna", "approver", password=PASSWORD)
    now = timezone.now().replace(second=0, microsecond=0)
    for w in range(WINDOWS):
        start = now - timedelta(minutes=WINDOWS - w)
        wave = 1.0 + 0.3 * ((w % 4) - 1.5)
        loads_make(
            cluster,
            start,
            {
                key: (2e5 * wave * (3 if key[0] == "orders" else 1), 3e5 * wave, 200 * wave)
                for key in ASSIGNMENT
            },
            assignment=ASSIGNMENT,
        )
    return {"cluster_id": cluster.pk, "next_window": now}


@pytest.fixture(scope="module")
def world(site) -> dict:
    return site.call(world_build)


def expected_replicas() -> list[list[int]]:
    z = [[0, 0, 0] for _ in TOPICS]
    for (topic, _), replicas in ASSIGNMENT.items():
        for b in replicas:
            z[TOPICS.index(topic)][b - 1] += 1
    return z


def test_it_shows_the_heatmap_and_charts_and_follows_the_cluster_live(site, world, sign_in):
    page = sign_in("vic", PASSWORD)
    assert page.locator('tr[data-cluster="prod"]').count() == 1
    page.goto(site.url("/clusters/prod/"))
    page.wait_for_selector('#heatmap[data-brokers="1,2,3"][data-renders]')
    page.wait_for_selector(f'#chart-network-in[data-windows="{WINDOWS}"]')
    page.wait_for_selector('#live-status[data-state="live"]')
    plotted = page.evaluate(
        "() => { const t = document.getElementById('heatmap').data[0];"
        " return {x: t.x, y: t.y, z: t.z}; }"
    )
    # The heaviest topics first (by replicas here), then by name.
    z = expected_replicas()
    order = sorted(range(len(TOPICS)), key=lambda i: (-sum(z[i]), TOPICS[i]))
    assert plotted == {
        "x": ["1", "2", "3"],
        "y": [TOPICS[i] for i in order],
        "z": [z[i] for i in order],
    }
    screenshot(page, "cluster")

    # Click the (payments, broker 3) cell: its partitions are listed.
    point = page.evaluate(
        """() => {
          const gd = document.getElementById('heatmap');
          const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
          const box = gd.querySelector('.nsewdrag').getBoundingClientRect();
          const column = gd.data[0].x.indexOf('3'), row = gd.data[0].y.indexOf('payments');
          return {x: box.left + xa.l2p(column), y: box.top + ya.l2p(row)};
        }"""
    )
    page.mouse.click(point["x"], point["y"])
    page.wait_for_selector("#cell-partitions:not([hidden]) h3")
    assert page.text_content("#cell-partitions h3") == "payments on broker 3: 6 partition(s)"

    # Colour by traffic: bytes in per broker and topic from the newest window.
    page.select_option("#heatmap-metric", "network_in")
    page.wait_for_selector('#heatmap[data-metric="network_in"]')

    # A sync sees broker 2 gone: the page follows without a reload.
    page.evaluate("() => { window.notReloaded = true; }")
    page.select_option("#heatmap-metric", "replicas")
    page.wait_for_selector('#heatmap[data-metric="replicas"]')

    def broker_2_dies() -> None:
        cluster = Cluster.objects.get(name="prod")
        cluster_apply(cluster, ASSIGNMENT, alive=(1, 3))
        # Stamped as the sync's push is: the page fetches the answers shared for it.
        cluster_changed_send(
            cluster_id=cluster.pk, stamp=cluster_state_stamp(cluster_id=cluster.pk)
        )

    site.call(broker_2_dies)
    page.wait_for_selector('tr[data-broker="2"][data-alive="false"]', timeout=15_000)
    page.wait_for_selector('#heatmap[data-dead="2"]', timeout=15_000)
    assert page.text_content('[data-stat="brokers"] .value').strip() == "2 / 3"

    # A new traffic window arrives: the charts grow by one window, live.
    def window_arrives() -> None:
        cluster_id = world["cluster_id"]
        cluster = Cluster.objects.get(pk=cluster_id)
        burst = {key: (4e5, 6e5, 400.0) for key in ASSIGNMENT}
        loads_make(cluster, world["next_window"], burst, ASSIGNMENT)
        loads_changed_send(cluster_id=cluster_id)

    site.call(window_arrives)
    page.wait_for_selector(f'#chart-network-in[data-windows="{WINDOWS + 1}"]', timeout=15_000)
    assert page.evaluate("() => window.notReloaded") is True
    assert page.js_errors == []


def test_it_shows_an_approval_live_in_another_browser(site, world, sign_in):
    def broker_2_back_and_a_plan() -> int:
        cluster = Cluster.objects.get(pk=world["cluster_id"])
        cluster_apply(cluster, ASSIGNMENT)
        return plan_make(cluster).pk

    plan_id = site.call(broker_2_back_and_a_plan)
    url = site.url(f"/clusters/prod/plans/{plan_id}/")

    watcher = sign_in("vic", PASSWORD)
    watcher.goto(url)
    watcher.wait_for_selector('#live-status[data-state="live"]')
    assert watcher.locator("#approve-button").count() == 0  # a viewer can't approve
    watcher.evaluate("() => { window.notReloaded = true; }")

    approver = sign_in("anna", PASSWORD)
    approver.goto(url)
    approver.wait_for_selector("#moves tbody tr")
    approver.wait_for_selector(".bars .plot .main-svg")
    approver.fill('form[data-action="approve"] input[name="reason"]', "balanced enough")
    approver.click("#approve-button")
    approver.wait_for_selector('#plan-state-badge[data-state="approved"]')

    # The other browser sees it without a reload.
    watcher.wait_for_selector('#plan-state-badge[data-state="approved"]', timeout=15_000)
    assert watcher.evaluate("() => window.notReloaded") is True
    assert "balanced enough" in watcher.text_content("#plan-decision")

    def approval_audited() -> tuple:
        event = AuditEvent.objects.get(action="plan.approved", object_id=str(plan_id))
        return event.actor, event.reason

    assert site.call(approval_audited) == ("anna", "balanced enough")
    assert watcher.js_errors == [] and approver.js_errors == []


def test_it_refuses_and_audits_a_forged_approval_by_a_viewer(site, world, sign_in):
    def a_new_plan() -> int:
        cluster = Cluster.objects.get(pk=world["cluster_id"])
        return plan_make(cluster, mode="leaders").pk

    plan_id = site.call(a_new_plan)
    page = sign_in("vic", PASSWORD)
    page.goto(site.url(f"/clusters/prod/plans/{plan_id}/"))
    page.wait_for_selector("#no-actions")
    assert page.locator("#approve-button").count() == 0

    status, body = page.evaluate(
        """async (id) => {
          const r = await fetch(`/api/plans/${id}/approve/`, {
            method: "POST", credentials: "same-origin",
            headers: {"Content-Type": "application/json", "X-CSRFToken": Live.csrfToken()},
            body: JSON.stringify({reason: "forged"})});
          return [r.status, await r.json()];
        }""",
        plan_id,
    )
    assert status == 403 and "not allowed to approve" in body["detail"]

    def outcome() -> tuple:
        event = AuditEvent.objects.get(action="plan.approve_refused", object_id=str(plan_id))
        return Plan.objects.get(pk=plan_id).state, event.actor, event.reason

    state, actor, reason = site.call(outcome)
    assert (state, actor) == ("proposed", "vic") and "not allowed" in reason


def test_it_offers_the_newer_plan_when_the_one_being_read_was_superseded(site, world, sign_in):
    def a_proposal() -> int:
        cluster = Cluster.objects.get(pk=world["cluster_id"])
        cluster_apply(cluster, ASSIGNMENT)
        return plan_make(cluster).pk

    first = site.call(a_proposal)
    approver = sign_in("anna", PASSWORD)
    approver.goto(site.url(f"/clusters/prod/plans/{first}/"))
    approver.wait_for_selector('#live-status[data-state="live"]')
    approver.wait_for_selector("#approve-button")

    # While the page is read, a newer proposal replaces it: the page says so live and
    # offers the newer one; no Approve button is left to get a 409 from.
    second = site.call(lambda: plan_make(Cluster.objects.get(pk=world["cluster_id"])).pk)
    approver.wait_for_selector("#plan-newer-link", timeout=15_000)
    banner = approver.text_content("#plan-replaced")
    assert "This plan is superseded" in banner and f"superseded by plan #{second}" in banner
    assert approver.locator("#approve-button").count() == 0
    screenshot(approver, "plan-superseded")

    approver.click("#plan-newer-link")
    approver.wait_for_url(f"**/plans/{second}/")
    approver.click("#approve-button")
    approver.wait_for_selector('#plan-state-badge[data-state="approved"]')
    assert approver.js_errors == []
