"""A 50,000-partition cluster in headless Chromium (BIG_CLUSTER_PARTITIONS for another
size): the summarised cluster page (every broker, 50 heatmap rows plus "other", one
page of topics, within the page budget) and the plan's moves table, filtered and
cut by the server. Built in bulk through the sync's and the storage's own services
(scripts/devkit/synthetic_cluster.py), without Kafka or the planner.

    UPDATE_SCREENSHOTS=1 BIG_CLUSTER_PARTITIONS=200000 BIG_CLUSTER_BROKERS=270 \\
    BIG_CLUSTER_TOPICS=8000 .venv/bin/python -m pytest tests/browser/test_big_cluster.py
refreshes the README's picture of a 200k-partition cluster (docs/screenshots/).
"""

import os
import time

import pytest
from devkit.synthetic_cluster import state_make, topology_generate, window_make
from devkit.users import user_make
from django.conf import settings
from django.utils import timezone

from apps.audit.services import actor_system
from apps.clusters.models import Cluster
from apps.clusters.services import cluster_state_apply
from apps.metrics.models import AggregationRun
from apps.metrics.services import aggregation_results_store
from tests.browser.conftest import screenshot
from tests.support.factories import plan_from_assignment

pytestmark = [pytest.mark.browser, pytest.mark.integration]

PASSWORD = "browser-test-pass"
PARTITIONS = int(os.environ.get("BIG_CLUSTER_PARTITIONS", "50000"))
BROKERS = int(os.environ.get("BIG_CLUSTER_BROKERS", "100"))
TOPICS = int(os.environ.get("BIG_CLUSTER_TOPICS", "2000"))
MOVES = 3000


def world_build() -> dict:
    topology = topology_generate(brokers=BROKERS, topics=TOPICS, partitions=PARTITIONS)
    cluster = Cluster.objects.create(name="big", bootstrap_servers="127.0.0.1:1")
    state = state_make(topology, brokers=BROKERS)
    cluster_state_apply(cluster=cluster, state=state, now=timezone.now())
    window_ms = settings.METRICS_WINDOW_SECONDS * 1000
    start_ms = (int(time.time() * 1000) // window_ms - 2) * window_ms
    run = AggregationRun.objects.create(cluster=cluster, started_at=timezone.now())
    aggregation_results_store(
        cluster=cluster,
        run=run,
        topic="metrics",
        result=window_make(topology, window_start_ms=start_ms, window_ms=window_ms),
    )
    AggregationRun.objects.filter(pk=run.pk).update(status=AggregationRun.Status.SUCCEEDED)
    # A plan of MOVES moves: each partition's last replica onto the next broker free.
    before, after = {}, {}
    for name, parts in topology:
        for index, replicas in parts:
            before[(name, index)] = replicas
            if len(after) < MOVES and index % 3 == 0:
                target = next(b for b in range(1, BROKERS + 1) if b not in replicas)
                after[(name, index)] = [*replicas[:-1], target]
    plan = plan_from_assignment(cluster, after, before, actor=actor_system(name="browser-test"))
    user_make("vic", "viewer", password=PASSWORD)
    return {"plan_id": plan.pk, "first_topic": topology[0][0]}


@pytest.fixture(scope="module")
def world(site) -> dict:
    return site.call(world_build)


def test_it_summarises_the_cluster_page_of_a_big_cluster(site, world, sign_in):
    page = sign_in("vic", PASSWORD)
    response = page.request.get(site.url("/clusters/big/"))
    assert response.ok and len(response.body()) <= 300 * 1024  # the page budget
    page.goto(site.url("/clusters/big/"))
    page.wait_for_selector("#heatmap[data-renders]")
    page.wait_for_selector('#live-status[data-state="live"]')
    assert page.locator("tr[data-broker]").count() == BROKERS
    rows = page.evaluate("() => document.getElementById('heatmap').data[0].y")
    # 50 topics, the heaviest first (topic-00000 holds the most partitions), then one
    # row for all the others.
    assert len(rows) == 51 and rows[0] == world["first_topic"]
    assert "other" in rows[-1] and str(TOPICS - 50) in rows[-1]
    heatmap = page.request.get(site.url("/api/clusters/big/heatmap/?metric=network_in"))
    assert heatmap.ok and len(heatmap.body()) <= 300 * 1024
    screenshot(page, f"cluster-{PARTITIONS // 1000}k")
    assert page.js_errors == []


def test_it_pages_and_filters_the_moves_of_a_big_plan_on_the_server(site, world, sign_in):
    page = sign_in("vic", PASSWORD)
    page.goto(site.url(f"/clusters/big/plans/{world['plan_id']}/"))
    page.wait_for_selector("#moves tbody tr")
    assert page.locator("#moves tbody tr").count() == 500  # the first page only
    assert page.text_content("#moves-count").startswith(f"{MOVES} move(s), first 500 shown")
    page.fill('#moves-filter input[name="topic"]', world["first_topic"])
    page.wait_for_function(
        "() => !document.getElementById('moves-count').textContent.startsWith('3000 ')"
    )
    shown = page.eval_on_selector_all("#moves tbody tr", "rows => rows.map(r => r.dataset.move)")
    assert shown and all(m.startswith(world["first_topic"] + "-") for m in shown)
    assert page.js_errors == []
