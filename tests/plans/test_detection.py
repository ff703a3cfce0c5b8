"""The periodic balancer's decisions, on a synced model (no Kafka)."""

from datetime import timedelta

import pytest
from devkit.partition_loads import partition_load_write
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.clusters.models import Broker
from apps.plans.models import ClusterPolicy, Plan, PlanMode, PlanOrigin, PlanState
from apps.plans.services import cluster_detect, clusters_due_for_detection, policy_get
from apps.plans.tasks import plans_detect_all
from tests.support.factories import cluster_apply

pytestmark = pytest.mark.django_db

BALANCED = {("orders", i): [[1, 2], [2, 3], [3, 1]][i % 3] for i in range(6)}


def set_policy(cluster, **values) -> ClusterPolicy:
    policy = policy_get(cluster=cluster)
    ClusterPolicy.objects.filter(pk=policy.pk).update(**values)
    policy.refresh_from_db()
    return policy


def test_it_proposes_nothing_for_a_balanced_cluster(orders_cluster):
    cluster_apply(orders_cluster, BALANCED)
    assert cluster_detect(cluster=orders_cluster) is None
    assert not Plan.objects.exists()


def test_it_waits_out_the_grace_delay_then_proposes_self_healing(orders_cluster):
    set_policy(orders_cluster, dead_broker_grace=60)
    cluster_apply(orders_cluster, BALANCED)
    t0 = timezone.now()
    cluster_apply(orders_cluster, BALANCED, alive=(1, 2), now=t0 + timedelta(seconds=1))
    assert not Broker.objects.get(cluster=orders_cluster, node_id=3).alive

    assert cluster_detect(cluster=orders_cluster, now=t0 + timedelta(seconds=30)) is None
    assert not Plan.objects.exists()

    # Syncs go on; broker 3's last_seen stays at t0.
    cluster_apply(orders_cluster, BALANCED, alive=(1, 2), now=t0 + timedelta(seconds=55))
    plan = cluster_detect(cluster=orders_cluster, now=t0 + timedelta(seconds=61))
    assert plan is not None and plan.origin == PlanOrigin.DETECTOR
    assert plan.mode == PlanMode.FIX_OFFLINE
    assert plan.trigger.startswith("broker 3 down: last seen alive 61 s ago (grace 60 s)")
    # Only partitions with a replica on broker 3 move, and only off broker 3.
    for move in plan.moves.all():
        assert 3 in move.replicas_before and 3 not in move.replicas_after
        assert len(move.replicas_after) == 2
    assert plan.moves.count() == 4
    event = AuditEvent.objects.get(action="plan.proposed")
    assert event.actor_kind == "system" and event.actor == "detector"


def test_it_does_not_propose_the_same_plan_twice(orders_cluster):
    set_policy(orders_cluster, dead_broker_grace=0)
    cluster_apply(orders_cluster, BALANCED, alive=(1, 2))
    first = cluster_detect(cluster=orders_cluster)
    second = cluster_detect(cluster=orders_cluster)
    assert first is not None and second == first
    assert Plan.objects.count() == 1


def test_it_auto_approves_self_healing_when_the_policy_says_so(orders_cluster):
    set_policy(orders_cluster, dead_broker_grace=0, auto_approve_self_healing=True)
    cluster_apply(orders_cluster, BALANCED, alive=(1, 2))
    plan = cluster_detect(cluster=orders_cluster)
    plan.refresh_from_db()
    assert plan.state == PlanState.APPROVED and plan.decided_by_policy


def test_it_moves_load_onto_a_new_empty_broker(orders_cluster):
    # The `cluster` fixture has every replica on brokers 1 and 2.
    plan = cluster_detect(cluster=orders_cluster)
    assert plan is not None and plan.mode == PlanMode.ADD_BROKERS and plan.brokers == [3]
    assert "broker 3" in plan.trigger
    for move in plan.moves.all():
        assert set(move.replicas_after) - set(move.replicas_before) <= {3}


def test_it_proposes_a_rebalance_when_a_goal_is_violated(orders_cluster):
    skewed = {("orders", i): [[1, 2], [2, 1], [1, 3]][i % 3] for i in range(9)}
    cluster_apply(orders_cluster, skewed)
    plan = cluster_detect(cluster=orders_cluster)
    assert plan is not None and plan.mode == PlanMode.FULL
    assert "goals violated" in plan.trigger and "replica-distribution" in plan.trigger
    # counts 9, 6, 3 around a mean of 6: the worst broker and its side are named
    assert "replica-distribution: broker 1 above the band: 1.50 × mean" in plan.trigger


def test_it_says_which_broker_is_below_the_band(orders_cluster):
    set_policy(orders_cluster, balance_threshold=1.5)
    layout = [[1, 2]] * 6 + [[1, 3], [2, 3], [1, 2]]
    cluster_apply(orders_cluster, {("orders", i): r for i, r in enumerate(layout)})
    plan = cluster_detect(cluster=orders_cluster)
    assert plan is not None and plan.mode == PlanMode.FULL
    # replicas 8, 8, 2 around a mean of 6: only broker 3 is out, on the low side
    assert (
        "replica-distribution: broker 3 below the band: 0.33 × mean, band 0.50–1.50, "
        "threshold 1.5" in plan.trigger
    )


def test_it_leaves_excluded_topics_and_brokers_alone(orders_cluster):
    state = {("orders", i): [1, 2] for i in range(6)}
    state.update({("orders", i): [1, 3] for i in range(6, 9)})
    state.update({("audit-log", i): [1, 2] for i in range(3)})
    cluster_apply(orders_cluster, state)

    set_policy(orders_cluster, topics_exclude=["orders"])
    plan = cluster_detect(cluster=orders_cluster)
    assert plan is not None and {m.topic for m in plan.moves.all()} == {"audit-log"}

    set_policy(orders_cluster, topics_exclude=[], topics_include=["ord*"], excluded_brokers=[3])
    plan = cluster_detect(cluster=orders_cluster)
    # Without broker 3, orders-0..5 all led by broker 1: leadership is rebalanced on 1 and 2.
    assert plan is not None
    moved = {(m.topic, m.partition) for m in plan.moves.all()}
    assert moved and all(t == "orders" and p < 6 for t, p in moved)
    assert all(3 not in m.replicas_after for m in plan.moves.all())


def test_it_skips_a_cluster_whose_model_is_stale_or_busy(orders_cluster, operator, approver):
    cluster_apply(orders_cluster, BALANCED, alive=(1, 2))
    set_policy(orders_cluster, dead_broker_grace=0)
    orders_cluster.__class__.objects.filter(pk=orders_cluster.pk).update(
        last_sync_error="unreachable: boom"
    )
    assert cluster_detect(cluster=orders_cluster) is None

    orders_cluster.__class__.objects.filter(pk=orders_cluster.pk).update(last_sync_error="")
    plan = cluster_detect(cluster=orders_cluster)
    Plan.objects.filter(pk=plan.pk).update(state=PlanState.EXECUTING)
    assert cluster_detect(cluster=orders_cluster) is None
    assert Plan.objects.count() == 1


def test_it_marks_an_outdated_proposal_stale_and_proposes_afresh(orders_cluster):
    set_policy(orders_cluster, dead_broker_grace=0)
    cluster_apply(orders_cluster, BALANCED, alive=(1, 2))
    first = cluster_detect(cluster=orders_cluster)
    moved = dict(BALANCED)
    moved[("orders", 1)] = [3, 2]
    cluster_apply(orders_cluster, moved, alive=(1, 2))
    second = cluster_detect(cluster=orders_cluster)
    first.refresh_from_db()
    assert first.state == PlanState.STALE and second.pk != first.pk


def test_it_runs_detection_on_the_policy_interval(
    orders_cluster, django_capture_on_commit_callbacks
):
    cluster_apply(orders_cluster, BALANCED)
    set_policy(orders_cluster, detection_interval=60)
    now = timezone.now()
    assert clusters_due_for_detection(now=now) == [orders_cluster.pk]
    cluster_detect(cluster=orders_cluster, now=now)
    assert clusters_due_for_detection(now=now + timedelta(seconds=30)) == []
    assert clusters_due_for_detection(now=now + timedelta(seconds=61)) == [orders_cluster.pk]
    set_policy(orders_cluster, detection_enabled=False)
    assert clusters_due_for_detection(now=now + timedelta(seconds=61)) == []


def test_the_beat_task_fans_out_per_due_cluster(orders_cluster, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    from balancer_site.celery import app

    app.conf.task_always_eager = True
    try:
        cluster_apply(orders_cluster, {("orders", i): [1, 2] for i in range(4)}, alive=(1, 2, 3))
        plans_detect_all()
    finally:
        app.conf.task_always_eager = False
    assert Plan.objects.filter(cluster=orders_cluster, mode=PlanMode.ADD_BROKERS).exists()


def test_it_proposes_when_measured_bytes_in_are_skewed(orders_cluster, settings):
    placement = {("orders", i): [[1, 2], [2, 3], [3, 1]][i % 3] for i in range(6)}
    cluster_apply(orders_cluster, placement)
    assert cluster_detect(cluster=orders_cluster) is None  # counts are even: nothing to do
    now = timezone.now()
    for (topic, index), replicas in placement.items():
        partition_load_write(
            cluster=orders_cluster,
            topic=topic,
            partition=index,
            window_start=now - timedelta(seconds=60),
            window_end=now,
            samples=2,
            replicas=replicas,
            # Partitions on broker 1 carry 5x the traffic.
            bytes_in=5000.0 if 1 in replicas else 1000.0,
            bytes_out=0.0,
            size=1000,
        )
    # One window is a spike until the next slide's window confirms it.
    assert cluster_detect(cluster=orders_cluster) is None
    for (topic, index), replicas in placement.items():
        partition_load_write(
            cluster=orders_cluster,
            topic=topic,
            partition=index,
            window_start=now - timedelta(seconds=60 - settings.METRICS_WINDOW_SLIDE_SECONDS),
            window_end=now + timedelta(seconds=settings.METRICS_WINDOW_SLIDE_SECONDS),
            samples=2,
            replicas=replicas,
            bytes_in=5000.0 if 1 in replicas else 1000.0,
            bytes_out=0.0,
            size=1000,
        )
    plan = cluster_detect(cluster=orders_cluster)
    assert plan is not None and plan.mode == PlanMode.FULL
    assert "network-in-distribution" in plan.trigger


@pytest.fixture
def rechecks(monkeypatch):
    """(cluster_id, eta) of every re-check the detection schedules."""
    scheduled: list[tuple[int, object]] = []
    monkeypatch.setattr(
        "apps.plans.services.detection.recheck_schedule",
        lambda *, cluster_id, at: scheduled.append((cluster_id, at)),
    )
    return scheduled


def test_a_recheck_is_enqueued_with_its_eta_after_commit(
    monkeypatch, django_capture_on_commit_callbacks
):
    from celery import current_app

    from apps.plans.queue import CLUSTER_RECHECK_TASK, recheck_schedule

    sent = []
    task = current_app.tasks[CLUSTER_RECHECK_TASK]
    monkeypatch.setattr(task, "apply_async", lambda args, eta: sent.append((args, eta)))
    at = timezone.now() + timedelta(seconds=60)
    with django_capture_on_commit_callbacks(execute=True):
        recheck_schedule(cluster_id=7, at=at)
        assert sent == []
    assert sent == [((7,), at)]


def test_a_broker_death_schedules_a_recheck_at_the_end_of_its_grace(orders_cluster, rechecks):
    set_policy(orders_cluster, dead_broker_grace=60)
    t0 = timezone.now()
    cluster_apply(orders_cluster, BALANCED, now=t0)
    assert rechecks == []
    cluster_apply(orders_cluster, BALANCED, alive=(1, 2), now=t0 + timedelta(seconds=10))
    # Counted from when it last answered, not from when the sync noticed.
    assert rechecks == [(orders_cluster.pk, t0 + timedelta(seconds=61))]


def test_a_round_within_the_grace_schedules_a_recheck_when_it_ends(orders_cluster, rechecks):
    set_policy(orders_cluster, dead_broker_grace=60)
    t0 = timezone.now()
    cluster_apply(orders_cluster, BALANCED, now=t0)
    cluster_apply(orders_cluster, BALANCED, alive=(1, 2), now=t0 + timedelta(seconds=2))
    rechecks.clear()
    assert cluster_detect(cluster=orders_cluster, now=t0 + timedelta(seconds=20)) is None
    assert rechecks == [(orders_cluster.pk, t0 + timedelta(seconds=61))]


def test_no_recheck_when_detection_is_off(orders_cluster, rechecks):
    set_policy(orders_cluster, detection_enabled=False)
    t0 = timezone.now()
    cluster_apply(orders_cluster, BALANCED, now=t0)
    cluster_apply(orders_cluster, BALANCED, alive=(1, 2), now=t0 + timedelta(seconds=2))
    assert rechecks == []


def test_a_queue_outage_never_fails_the_sync_that_saw_a_death(
    orders_cluster, monkeypatch, django_capture_on_commit_callbacks
):
    from celery import current_app

    from apps.plans.queue import CLUSTER_RECHECK_TASK

    def down(*args, **kwargs):
        raise ConnectionError("redis down")

    monkeypatch.setattr(current_app.tasks[CLUSTER_RECHECK_TASK], "apply_async", down)
    with django_capture_on_commit_callbacks(execute=True):
        cluster_apply(orders_cluster, BALANCED, alive=(1, 2))
    assert not Broker.objects.get(cluster=orders_cluster, node_id=3).alive
