"""Reads of plans: cluster health, loads before / after, actions by role, moves."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.plans.models import Plan, PlanContent, PlanState
from apps.plans.selectors import (
    cluster_health_get,
    plan_actions_get,
    plan_goals_list,
    plan_loads_before_after,
    plan_moves_filter,
    plan_report_summary,
    plans_list,
    policy_or_default,
    snapshot_build,
)
from apps.plans.services.actors import DETECTOR
from apps.plans.services.transitions import plan_transition
from tests.support.factories import SKEWED, cluster_apply, plan_make

pytestmark = pytest.mark.django_db


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


def test_it_stores_the_bars_with_the_plan_and_they_match_the_cluster_recomputed(
    cluster, django_assert_max_num_queries
):
    plan = plan_make(cluster)
    assert plan.report["broker_loads"]["brokers"] == [1, 2, 3]
    # Read from the plan: one query, no snapshot of the cluster.
    with django_assert_max_num_queries(1):
        stored = plan_loads_before_after(plan=plan)
    report = dict(plan.report)
    del report["broker_loads"]
    PlanContent.objects.filter(plan=plan).update(report=report)
    recomputed = plan_loads_before_after(plan=plan)
    assert stored.brokers == recomputed.brokers
    for side in ("before", "after"):
        for measure in ("replicas", "leaders", "network_in", "disk"):
            assert getattr(stored, side)[measure] == pytest.approx(
                getattr(recomputed, side)[measure]
            )


def test_it_lists_the_goals_of_the_moves_and_the_report_summary_without_the_moves(cluster):
    plan = plan_make(cluster)
    every_move = sorted({g for goals in plan.moves.values_list("goals", flat=True) for g in goals})
    assert every_move and plan_goals_list(plan=plan) == every_move
    report = dict(plan.report)
    del report["move_goals"]  # a plan made before they were stored
    PlanContent.objects.filter(plan=plan).update(report=report)
    assert plan_goals_list(plan=plan) == every_move

    summary = plan_report_summary(plan=plan)
    assert summary["balance"] == plan.report["balance"] and "moves" not in summary


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
    assert to_3.count() == sum(1 for m in moves if 3 in m.replicas_before + m.replicas_after) > 0
    goal = moves[0].goals[0]
    with_goal = plan_moves_filter(plan=plan, goal=goal)
    assert with_goal.count() == sum(1 for m in moves if goal in m.goals) > 0
    assert all(goal in m.goals for m in with_goal)
    # Both at once (JSON containment on PostgreSQL, the lists read on SQLite).
    both = {(m.topic, m.partition) for m in plan_moves_filter(plan=plan, broker=3, goal=goal)}
    assert both == {
        (m.topic, m.partition)
        for m in moves
        if goal in m.goals and 3 in m.replicas_before + m.replicas_after
    }
    assert plan_moves_filter(plan=plan, goal="no such goal").count() == 0
    # Whole list items only: not a goal's prefix.
    assert plan_moves_filter(plan=plan, goal=goal[:-1]).count() == 0
    by_topic_desc = [m.topic for m in plan_moves_filter(plan=plan, ordering="-topic")]
    assert by_topic_desc == sorted(by_topic_desc, reverse=True)


def test_it_lists_the_metrics_topic_as_unplaceable_unless_the_policy_excludes_it(cluster):
    # __balancer_metrics created with RF 3 while 3 brokers were alive, then broker 3 died
    metrics = {("__balancer_metrics", i): [1, 2, 3] for i in range(2)}
    cluster_apply(cluster, {**SKEWED, **metrics})
    cluster_apply(cluster, {**SKEWED, **metrics}, alive=(1, 2))
    policy = policy_or_default(cluster=cluster)

    scoped = snapshot_build(cluster=cluster, policy=policy)
    assert scoped.unplaceable == ["__balancer_metrics-0", "__balancer_metrics-1"]

    policy.topics_exclude = ["__balancer_metrics"]
    scoped = snapshot_build(cluster=cluster, policy=policy)
    assert scoped.unplaceable == []
    topics = {p.topic for p in scoped.snapshot.partitions}
    assert "__balancer_metrics" not in topics and topics  # the rest stays in scope


def test_it_keeps_a_plans_large_parts_out_of_its_row(cluster):
    plan = plan_make(cluster)
    content = PlanContent.objects.get(plan=plan)
    assert content.reassignment["partitions"] and content.rollback_reassignment["partitions"]
    assert plan.partition_count == len(content.reassignment["partitions"])
    # The report's per-partition moves are the plan's moves, stored once.
    assert "moves" not in content.report and content.report["balance"]
    assert plan.moves.count() == plan.partition_count

    with CaptureQueriesContext(connection) as queries:
        listed = [(p.pk, p.partition_count, p.state) for p in plans_list(cluster=cluster)]
        plan_transition(
            plan=Plan.objects.get(pk=plan.pk),
            to=PlanState.REJECTED,
            actor=DETECTOR,
            action="plan.rejected",
        )
    assert listed == [(plan.pk, plan.partition_count, "proposed")]
    assert not [q for q in queries if "plans_plancontent" in q["sql"]]
