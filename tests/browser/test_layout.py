"""Page layout at a 1400 px window in headless Chromium: no page wider than the window,
no chart drawn over another, the nav bar as wide as the page, legends clear of the axis
labels, and no traffic line drawn through a window that was not measured. These pages
are also the README's screenshots (what-if, clusters overview, plan)."""

from datetime import timedelta

import pytest
from devkit.partition_loads import partition_loads_read

from apps.clusters.models import Cluster
from tests.browser.conftest import screenshot
from tests.browser.test_dashboard import ASSIGNMENT, PASSWORD, world_build
from tests.support.factories import cluster_make, loads_make, plan_make

pytestmark = [pytest.mark.browser, pytest.mark.integration]

WIDTH = 1400
# How far the page reaches past the window, in px (0: no horizontal scroll bar).
OVERFLOW_JS = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
# Every pair of the matched elements whose boxes intersect (by more than a pixel).
OVERLAPS_JS = """(selector) => {
  const boxes = [...document.querySelectorAll(selector)].map((el) => el.getBoundingClientRect());
  const hits = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 1 && h > 1) hits.push([i, j]);
    }
  return hits;
}"""
# Per chart: the legend's box against each x tick label, the x axis title and the title.
LEGEND_CLASHES_JS = """(selector) => {
  const clash = (a, b) =>
    Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
    Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  const out = [];
  document.querySelectorAll(selector).forEach((plot, n) => {
    const legend = plot.querySelector(".legend .bg") || plot.querySelector(".legend");
    if (!legend) { out.push([n, "no legend"]); return; }
    const box = legend.getBoundingClientRect();
    plot.querySelectorAll(".xtick text, .g-xtitle text, .g-gtitle text").forEach((label) => {
      if (label.textContent && clash(box, label.getBoundingClientRect()))
        out.push([n, label.textContent]);
    });
  });
  return out;
}"""


@pytest.fixture(scope="module")
def world(site) -> dict:
    def build() -> dict:
        world = world_build()
        # A second cluster as a real one looks: several brokers in its bootstrap list and
        # a long error from its last sync.
        other = cluster_make("payments-eu-west-1", ASSIGNMENT)
        Cluster.objects.filter(pk=other.pk).update(
            bootstrap_servers=",".join(f"kafka-{i}.eu-west-1.internal:9092" for i in range(6)),
            last_sync_error='KafkaError{code=_TRANSPORT,val=-195,str="Failed to get metadata: '
            'Local: Broker transport failure (after 10002ms in state UP)"}',
        )
        return world

    return site.call(build)


def opened(sign_in, site, path: str, user: str = "anna"):
    page = sign_in(user, PASSWORD, width=WIDTH)
    # Plotly is 3.5 MB of script: on a loaded machine a page takes more than 30 s.
    page.set_default_timeout(90_000)
    page.goto(site.url(path))
    return page


def test_it_draws_the_what_if_charts_side_by_side_within_the_window(site, world, sign_in):
    page = opened(sign_in, site, "/clusters/prod/what-if/")
    page.fill('input[name="add"]', "4:a, 5:b")
    page.click("#whatif-run")
    page.wait_for_selector("#whatif-result:not([hidden]), #whatif-error:not([hidden])")
    assert page.is_hidden("#whatif-error"), page.text_content("#whatif-error")
    page.wait_for_function(
        "() => [...document.querySelectorAll('#whatif-result .plot')].every((el) => el.data)"
    )
    assert page.evaluate(OVERFLOW_JS) <= 0
    assert page.evaluate(OVERLAPS_JS, "#whatif-result .plot .svg-container") == []
    assert page.evaluate(LEGEND_CLASHES_JS, "#whatif-result .plot") == []
    screenshot(page, "whatif")
    assert page.js_errors == []


def test_it_keeps_the_clusters_overview_and_its_nav_bar_within_the_window(site, world, sign_in):
    page = opened(sign_in, site, "/")
    page.wait_for_selector('tr[data-cluster="payments-eu-west-1"]')
    assert "Broker transport failure" in page.text_content(
        'tr[data-sync-error="payments-eu-west-1"]'
    )
    assert page.evaluate(OVERFLOW_JS) <= 0
    widths = page.evaluate(
        "() => ({bar: document.querySelector('.topbar').getBoundingClientRect().right,"
        " page: document.documentElement.scrollWidth,"
        " table: document.getElementById('clusters').getBoundingClientRect().right})"
    )
    # The nav bar spans the page, and the table ends inside it.
    assert widths["bar"] >= widths["page"] and widths["table"] <= widths["bar"]
    screenshot(page, "clusters")
    assert page.js_errors == []


def test_it_leaves_a_gap_for_an_unmeasured_window_and_keeps_the_legend_clear(site, world, sign_in):
    def first_window_unmeasured() -> None:
        # The window before the first: collected with a single sample, so no rate. The
        # aggregation still writes it, with broker loads summed from nothing.
        cluster = Cluster.objects.get(pk=world["cluster_id"])
        first = partition_loads_read(cluster=cluster)[0]
        start = first.window_start - timedelta(minutes=1)
        loads_make(cluster, start, {key: (None, None, None) for key in ASSIGNMENT}, ASSIGNMENT)

    site.call(first_window_unmeasured)
    page = opened(sign_in, site, "/clusters/prod/", user="vic")
    page.wait_for_selector("#chart-network-in[data-windows] .main-svg")
    first_points = page.evaluate(
        "() => ['chart-network-in', 'chart-network-out', 'chart-messages-in'].map((id) =>"
        " document.getElementById(id).data.map((trace) => [trace.y[0], trace.y[1]]))"
    )
    for chart in first_points:
        for first, second in chart:
            assert first is None and second is not None  # a gap, then the measured line
    assert page.evaluate(LEGEND_CLASHES_JS, "#traffic-charts .plot") == []
    assert page.evaluate(OVERFLOW_JS) <= 0
    assert page.js_errors == []


def test_it_draws_the_plan_charts_within_the_window(site, world, sign_in):
    plan_id = site.call(lambda: plan_make(Cluster.objects.get(pk=world["cluster_id"])).pk)
    page = opened(sign_in, site, f"/clusters/prod/plans/{plan_id}/")
    page.wait_for_selector("#moves tbody tr")
    page.wait_for_selector(".bars .plot .main-svg")
    assert page.evaluate(OVERFLOW_JS) <= 0
    assert page.evaluate(OVERLAPS_JS, "#plan-loads .plot .svg-container") == []
    assert page.evaluate(LEGEND_CLASHES_JS, "#plan-loads .plot") == []
    screenshot(page, "plan")
    assert page.js_errors == []


def _throttle_story(cluster_id: int) -> int:
    """A completed plan whose adaptive throttle rose, was halved when broker 2's canary
    p99 left its band, and rose again; the canary's rounds around it."""
    from django.utils import timezone

    from apps.audit.models import AuditEvent
    from apps.canary.models import CanaryWindow
    from apps.plans.models import Plan, PlanState

    cluster = Cluster.objects.get(pk=cluster_id)
    plan = plan_make(cluster)
    start = timezone.now() - timedelta(minutes=3)
    Plan.objects.filter(pk=plan.pk).update(
        state=PlanState.COMPLETED, started_at=start, finished_at=start + timedelta(seconds=150)
    )
    story = [
        (0, 5, "started at 5.0 MB/s (auto, ceiling 200.0 MB/s)"),
        (5, 10, "raised to 10.0 MB/s: every broker's canary p99 in its band"),
        (10, 20, "raised to 20.0 MB/s: every broker's canary p99 in its band"),
        (15, 40, "raised to 40.0 MB/s: every broker's canary p99 in its band"),
        (20, 80, "raised to 80.0 MB/s: every broker's canary p99 in its band"),
        (30, 40, "lowered to 40.0 MB/s: broker 2 p99 210 ms > 104 ms"),
    ] + [
        (35 + 5 * i, 45 + 5 * i, "raised: every broker's canary p99 in its band") for i in range(20)
    ]
    for second, mb, reason in story:
        AuditEvent.objects.create(
            created_at=start + timedelta(seconds=second),
            actor_kind="system",
            actor="executor",
            action="execution.throttle_adapted",
            object_type="plans.plan",
            object_id=str(plan.pk),
            after={"throttle_rate": mb * 1_000_000},
            reason=reason,
            cluster_id=cluster.pk,
        )
    for second in range(-10, 160, 5):
        for broker in (1, 2, 3):
            p99 = 52.0 + broker + (160.0 if broker == 2 and 22 <= second <= 30 else 0.0)
            CanaryWindow.objects.create(
                cluster=cluster,
                broker_id=broker,
                at=start + timedelta(seconds=second),
                sent=10,
                acked=10,
                received=10,
                errors=0,
                produce_p50_ms=p99 / 2,
                produce_p99_ms=p99,
                end_to_end_p50_ms=p99,
                end_to_end_p99_ms=p99 * 1.2,
            )
    return plan.pk


def test_it_draws_the_throttle_and_the_canary_of_a_plan(site, world, sign_in):
    plan_id = site.call(lambda: _throttle_story(world["cluster_id"]))
    page = opened(sign_in, site, f"/clusters/prod/plans/{plan_id}/")
    page.wait_for_selector("#chart-throttle[data-points] .main-svg")
    drawn = page.evaluate(
        "() => document.getElementById('chart-throttle').data"
        ".map((t) => t.y.filter((v) => v !== null).length)"
    )
    assert drawn[0] == 27  # 26 changes and the line held to the end
    assert drawn[1] == 30  # one point per canary round within the plan's span
    assert page.evaluate(LEGEND_CLASHES_JS, "#plan-throttle .plot") == []
    assert page.evaluate(OVERFLOW_JS) <= 0
    screenshot(page, "plan-throttle", element="#plan-throttle")
    assert page.js_errors == []
    page.goto(site.url("/clusters/prod/"))
    page.wait_for_selector("#chart-canary-produce[data-rounds] .main-svg")
    assert page.evaluate(LEGEND_CLASHES_JS, "#canary-charts .plot") == []
    screenshot(page, "canary", element="#canary-charts")
    assert page.js_errors == []
