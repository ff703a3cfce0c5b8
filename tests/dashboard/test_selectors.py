"""Read side of the dashboard: visibility, health, heatmap, traffic, plan figures."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.audit.services import audit_record
from apps.balancer import engine
from apps.dashboard.selectors import (
    audit_events_explore,
    broker_loads_of,
    broker_traffic_series,
    cluster_health_get,
    cluster_visible_get,
    clusters_visible_list,
    heatmap_get,
    partitions_filter,
    plan_actions_get,
    plan_loads_before_after,
    plan_moves_filter,
)

from .factories import SKEWED, cluster_apply, cluster_make, loads_make, plan_make

pytestmark = pytest.mark.django_db


def test_it_shows_clusters_only_to_role_holders(cluster, viewer, nobody, django_user_model):
    assert list(clusters_visible_list(user=viewer)) == [cluster]
    assert cluster_visible_get(user=viewer, name="prod") == cluster
    assert list(clusters_visible_list(user=nobody)) == []
    assert cluster_visible_get(user=nobody, name="prod") is None
    viewer.is_active = False
    assert list(clusters_visible_list(user=viewer)) == []


def test_it_counts_replicas_and_leaders_per_broker_and_topic(cluster):
    heatmap = heatmap_get(cluster=cluster, metric="replicas")
    assert heatmap.brokers == [1, 2, 3] and heatmap.topics == ["audit-log", "orders"]
    assert heatmap.z == [[2, 0, 2], [6, 6, 0]]

    leaders = heatmap_get(cluster=cluster, metric="leaders")
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


def test_it_refuses_an_unknown_heatmap_metric(cluster):
    with pytest.raises(ValueError, match="unknown metric"):
        heatmap_get(cluster=cluster, metric="cpu")


def test_it_filters_partitions_by_topic_and_broker(cluster):
    on_3 = partitions_filter(cluster=cluster, broker=3)
    assert [(p.topic.name, p.index) for p in on_3] == [("audit-log", 0), ("audit-log", 1)]
    orders_on_1 = partitions_filter(cluster=cluster, topic="orders", broker=1)
    assert orders_on_1.count() == 6
    assert partitions_filter(cluster=cluster, topic="orders", broker=3).count() == 0


def test_it_reports_health_and_balance(cluster):
    health = cluster_health_get(cluster=cluster)
    assert (health.brokers_alive, health.brokers_total, health.partitions) == (3, 3, 8)
    # Replicas 8 / 6 / 2: the busiest over the mean (16 / 3).
    assert health.balance["replicas"] == pytest.approx(8 / (16 / 3))
    assert health.balance["network_in"] is None  # no traffic measured yet
    assert health.healthy and health.open_plan is None and health.running_plan is None

    cluster_apply(cluster, SKEWED, alive=(1, 2))
    health = cluster_health_get(cluster=cluster)
    assert health.brokers_alive == 2 and health.under_replicated == 2 and not health.healthy


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


def test_it_computes_loads_like_the_planner(cluster):
    plan = plan_make(cluster)
    loads = plan_loads_before_after(plan=plan)
    assert loads.brokers == [1, 2, 3]
    assert loads.before["replicas"] == [8, 6, 2]
    assert sum(loads.after["replicas"]) == 16 and max(loads.after["replicas"]) < 8
    # The planner's own balance ratio agrees with our bars.
    after = loads.after["replicas"]
    assert plan.report["balance"]["replicas"]["after"] == pytest.approx(
        max(after) / (sum(after) / 3), abs=1e-6
    )


def test_it_models_a_snapshot_with_loads():
    snapshot = {
        "brokers": [{"id": 1, "rack": None, "alive": True}, {"id": 2, "rack": None, "alive": True}],
        "partitions": [
            {
                "topic": "t",
                "partition": 0,
                "replicas": [2, 1],
                "leader": 2,
                "load": {"bytes_in": 10.0, "bytes_out": 5.0, "messages_in": 1.0, "size": 100},
            }
        ],
    }
    loads = broker_loads_of(snapshot=snapshot)
    assert loads[2]["network_out"] == 15.0 and loads[1]["network_out"] == 0.0
    assert loads[1]["network_in"] == loads[2]["network_in"] == 10.0
    assert engine.propose(snapshot).report["partitions"] == 1  # the same snapshot plans


def test_it_offers_actions_by_role_and_state(cluster, viewer, approver, operator):
    plan = plan_make(cluster)
    assert not any(vars(plan_actions_get(user=viewer, plan=plan)).values())
    approver_actions = plan_actions_get(user=approver, plan=plan)
    assert approver_actions.approve and approver_actions.reject and not approver_actions.rollback
    assert not plan_actions_get(user=operator, plan=plan).approve


def test_it_filters_and_sorts_plan_moves(cluster):
    plan = plan_make(cluster)
    moves = list(plan.moves.all())
    assert moves
    to_3 = plan_moves_filter(plan=plan, broker=3)
    assert to_3.count() == sum(1 for m in moves if 3 in m.replicas_before + m.replicas_after)
    goal = moves[0].goals[0]
    assert all(goal in m.goals for m in plan_moves_filter(plan=plan, goal=goal))
    by_topic_desc = [m.topic for m in plan_moves_filter(plan=plan, ordering="-topic")]
    assert by_topic_desc == sorted(by_topic_desc, reverse=True)


def test_it_finds_audit_events_by_cluster(cluster, viewer):
    other = cluster_make(name="other")
    ours, theirs = plan_make(cluster), plan_make(other)
    audit_record(actor=viewer, action="cluster.viewed", obj=cluster)
    actions = {(e.action, e.object_id) for e in audit_events_explore(cluster=cluster)}
    assert ("plan.proposed", str(ours.pk)) in actions
    assert ("cluster.viewed", str(cluster.pk)) in actions
    assert ("plan.proposed", str(theirs.pk)) not in actions
    assert list(audit_events_explore(cluster=cluster, actor="vic")) != []
    assert list(audit_events_explore(cluster=other, actor="vic")) == []


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
