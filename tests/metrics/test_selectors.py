"""Reads of stored metrics: the heatmap and the traffic series per broker."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.metrics.selectors import broker_traffic_series, heatmap_get
from tests.support.factories import SKEWED, cluster_apply, cluster_make, loads_make

pytestmark = pytest.mark.django_db


def test_it_counts_replicas_and_leaders_per_broker_and_topic(cluster):
    heatmap = heatmap_get(cluster=cluster, metric="replicas", sort="name")
    assert heatmap.brokers == [1, 2, 3] and heatmap.topics == ["audit-log", "orders"]
    assert heatmap.z == [[2, 0, 2], [6, 6, 0]]

    leaders = heatmap_get(cluster=cluster, metric="leaders", sort="name")
    # orders-0,2,4 led by 1 and 1,3,5 by 2; audit-log-0 by 1 and -1 by 3.
    assert leaders.z == [[1, 0, 1], [3, 3, 0]]


def test_it_marks_dead_brokers_in_the_heatmap(cluster):
    cluster_apply(cluster, SKEWED, alive=(1, 3))
    heatmap = heatmap_get(cluster=cluster, metric="replicas")
    assert heatmap.brokers == [1, 2, 3] and heatmap.broker_alive == [True, False, True]


def test_it_spreads_traffic_by_the_load_model(cluster):
    start = timezone.now().replace(microsecond=0) - timedelta(minutes=5)
    loads_make(cluster, start - timedelta(minutes=1), {("orders", 0): (999.0, 999.0, 9.0)})
    loads_make(cluster, start, {("orders", 0): (100.0, 50.0, 10.0)})  # replicas [1, 2]

    bytes_in = heatmap_get(cluster=cluster, metric="network_in")
    row = bytes_in.z[bytes_in.topics.index("orders")]
    assert row == [100.0, 100.0, 0.0]  # every replica receives the bytes in
    assert bytes_in.window_end == (start + timedelta(seconds=60)).isoformat()

    bytes_out = heatmap_get(cluster=cluster, metric="network_out")
    # The leader serves consumers (50) and replicates to one follower (100).
    assert bytes_out.z[bytes_out.topics.index("orders")] == [150.0, 0.0, 0.0]


def test_it_puts_the_heaviest_topics_first_and_sums_the_rest_into_one_row(cluster):
    heaviest = heatmap_get(cluster=cluster, metric="replicas", limit=1)
    assert heaviest.topics == ["orders"] and heaviest.z == [[6, 6, 0]]
    assert heaviest.topics_total == 2
    assert (heaviest.other_topics, heaviest.other) == (1, [2, 0, 2])

    second = heatmap_get(cluster=cluster, metric="replicas", limit=1, offset=1)
    assert second.topics == ["audit-log"] and second.offset == 1
    assert (second.other_topics, second.other) == (1, [6, 6, 0])

    everything = heatmap_get(cluster=cluster, metric="replicas")
    assert everything.topics == ["orders", "audit-log"]
    assert (everything.other_topics, everything.other) == (0, [])


def test_it_searches_the_heatmap_topics_by_name(cluster):
    found = heatmap_get(cluster=cluster, metric="replicas", search="AUDIT")
    assert found.topics == ["audit-log"] and found.topics_total == 1
    assert found.other_topics == 0


def test_it_refuses_an_unknown_heatmap_metric(cluster):
    with pytest.raises(ValueError, match="unknown metric"):
        heatmap_get(cluster=cluster, metric="cpu")


def test_it_lists_traffic_per_broker_over_the_windows(cluster):
    start = timezone.now().replace(microsecond=0) - timedelta(minutes=10)
    for i in range(3):
        loads_make(
            cluster, start + timedelta(minutes=i), {("orders", 0): (100.0 * (i + 1), 0, 5.0)}
        )
    traffic = broker_traffic_series(cluster=cluster, windows=2)
    assert len(traffic.windows) == 2  # only the newest two
    assert traffic.series[1]["network_in"] == [200.0, 300.0]
    assert traffic.series[1]["network_out"] == [200.0, 300.0]  # replication to broker 2
    assert traffic.series[1]["messages_in"] == [5.0, 5.0]  # broker 1 leads orders-0
    assert traffic.series[2]["messages_in"] == [None, None]


@pytest.mark.parametrize(
    "metric, total",
    # 80 partitions of 3 replicas, each taking 10 B/s in and serving 5 B/s out.
    [("replicas", 240), ("leaders", 80), ("network_in", 2400), ("network_out", 2000)],
)
def test_it_builds_a_heatmap_in_a_few_queries_whatever_the_cluster_size(
    metric, total, django_assert_max_num_queries
):
    assignment = {
        (f"topic-{t:02d}", p): [1 + (t * 7 + p * 3 + k * 11) % 20 for k in range(3)]
        for t in range(40)
        for p in range(2)
    }
    cluster = cluster_make("big", assignment, alive=tuple(range(1, 21)))
    start = timezone.now() - timedelta(minutes=2)
    loads_make(cluster, start, dict.fromkeys(assignment, (10.0, 5.0, 1.0)), assignment)

    # A query per broker, topic or partition would take 20 or more here. (How long a
    # big heatmap takes is a figure for bench/, not an assertion.)
    with django_assert_max_num_queries(10):
        heatmap = heatmap_get(cluster=cluster, metric=metric)

    assert len(heatmap.brokers) == 20 and len(heatmap.topics) == 40
    assert sum(map(sum, heatmap.z)) == total


def test_a_dead_broker_shows_no_traffic_after_it_last_answered(cluster):
    from apps.clusters.models import Broker

    start = timezone.now().replace(microsecond=0) - timedelta(minutes=10)
    for i in range(3):
        loads_make(cluster, start + timedelta(minutes=i), {("orders", 0): (100.0, 0, 5.0)})
    # Broker 2 last answered during the first window.
    Broker.objects.filter(cluster=cluster, node_id=2).update(
        alive=False, last_seen=start + timedelta(seconds=30)
    )
    traffic = broker_traffic_series(cluster=cluster, windows=3)
    assert traffic.series[2]["network_in"] == [100.0, 0.0, 0.0]
    assert traffic.series[1]["network_in"] == [100.0, 100.0, 100.0]


def test_it_leaves_a_window_nothing_was_measured_in_out_of_the_traffic_series(cluster):
    # The first window collected has one sample, so no rate: the aggregation still writes
    # broker loads for it (summed from nothing, 0), and the chart must not drop to 0 there.
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=5)
    loads_make(cluster, start, {("orders", 0): (None, None, None)})
    loads_make(cluster, start + timedelta(minutes=1), {("orders", 0): (100.0, 50.0, 10.0)})

    traffic = broker_traffic_series(cluster=cluster, windows=5)
    assert len(traffic.windows) == 2
    assert traffic.series[1] == {
        "network_in": [None, 100.0],
        "network_out": [None, 150.0],  # 50 out plus 100 replicated to broker 2
        "messages_in": [None, 10.0],
    }
    assert traffic.series[2]["network_in"] == [None, 100.0]


@pytest.mark.parametrize("metric", ["replicas", "leaders", "network_in", "network_out"])
@pytest.mark.parametrize("search", ["", "a-", "b-", "a-1"])
def test_it_sums_exactly_the_matching_topics_not_shown_into_the_other_row(metric, search):
    # 30 "a-" and 10 "b-" topics: a search for "a-" leaves fewer topics out than it
    # puts into "other" (other = totals - shown - left out), "b-" the reverse (summed).
    assignment = {
        (f"{prefix}-{t:02d}", p): [1 + (t * 7 + p * 3 + k * 5) % 9 for k in range(3)]
        for prefix, count in (("a", 30), ("b", 10))
        for t in range(count)
        for p in range(1 + t % 3)
    }
    cluster = cluster_make("mixed", assignment, alive=tuple(range(1, 10)))
    start = timezone.now() - timedelta(minutes=2)
    loads = {key: (10.0 + key[1] + len(key[0]), 5.0, 1.0) for key in assignment}
    loads_make(cluster, start, loads, assignment)

    full = heatmap_get(cluster=cluster, metric=metric, search=search, limit=500)
    page = heatmap_get(cluster=cluster, metric=metric, search=search, limit=2, offset=1)

    assert page.topics == full.topics[1:3]
    not_shown = [row for t, row in zip(full.topics, full.z, strict=True) if t not in page.topics]
    expected = [sum(column) for column in zip(*not_shown, strict=True)]
    assert page.other_topics == len(not_shown) > 0
    assert page.other == pytest.approx(expected)
