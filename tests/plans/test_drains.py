"""Drains that stay drained: a completed remove-brokers plan marks its brokers drained,
no plan (detected or requested) places a replica on them until an operator undrains
them, and the product's own metrics topic never blocks a drain (on a synced model,
with an in-memory Kafka)."""

import pytest
from django.conf import settings

from apps.audit.models import AuditEvent
from apps.plans.errors import PlanPermissionDenied, PlanRequestInvalid
from apps.plans.models import BrokerDrain, Plan, PlanMode, PlanState
from apps.plans.selectors import drained_brokers_list
from apps.plans.services import (
    broker_undrain,
    cluster_detect,
    plan_approve,
    plan_request,
    policy_get,
)
from tests.plans.fakes import FakeKafka, run_to_end
from tests.support.factories import cluster_apply, policy_set

pytestmark = pytest.mark.django_db

BALANCED = {("orders", i): [[1, 2], [2, 3], [3, 1]][i % 3] for i in range(6)}
# Four brokers, broker 3 empty.
FOUR = {("orders", i): [[1, 2], [2, 4], [4, 1]][i % 3] for i in range(6)}
METRICS = settings.METRICS_TOPIC


def drained(cluster, node_id: int, by=None) -> BrokerDrain:
    from django.utils import timezone

    return BrokerDrain.objects.create(
        cluster=cluster, node_id=node_id, drained_at=timezone.now(), drained_by=by
    )


def test_a_completed_drain_marks_its_brokers_drained_with_who_and_when(
    orders_cluster, operator, approver
):
    cluster_apply(orders_cluster, BALANCED)
    plan = plan_request(cluster=orders_cluster, user=operator, mode="remove-brokers", brokers=[3])
    plan_approve(plan=plan, user=approver)
    assert not BrokerDrain.objects.exists()  # approved is not drained yet
    run_to_end(plan, FakeKafka(assignment={k: list(v) for k, v in BALANCED.items()}))
    assert plan.state == PlanState.COMPLETED

    [drain] = drained_brokers_list(cluster=orders_cluster)
    assert (drain.node_id, drain.drained_by, drain.plan_id) == (3, "olga", plan.pk)
    event = AuditEvent.objects.get(action="broker.drained")
    assert event.object_type == "clusters.broker" and event.after["node_id"] == 3
    assert event.after["plan"] == plan.pk and event.after["drained_by"] == "olga"


def test_rolling_back_a_completed_drain_undrains_its_brokers(orders_cluster, operator, approver):
    from apps.plans.services import plan_rollback_request

    cluster_apply(orders_cluster, BALANCED)
    kafka = FakeKafka(assignment={k: list(v) for k, v in BALANCED.items()})
    plan = plan_request(cluster=orders_cluster, user=operator, mode="remove-brokers", brokers=[3])
    plan_approve(plan=plan, user=approver)
    run_to_end(plan, kafka)
    assert BrokerDrain.objects.filter(node_id=3).exists()
    cluster_apply(orders_cluster, {k: list(v) for k, v in kafka.assignment.items()})

    rollback = plan_rollback_request(plan=plan, user=operator, reason="wrong broker")
    plan_approve(plan=rollback, user=approver)
    run_to_end(rollback, kafka)
    assert rollback.state == PlanState.COMPLETED
    assert not BrokerDrain.objects.exists()
    event = AuditEvent.objects.get(action="broker.undrained")
    assert event.actor == "executor" and f"rollback plan #{rollback.pk}" in event.reason


def test_a_plan_of_another_mode_drains_nothing(orders_cluster, operator, approver, fake_kafka):
    plan = plan_request(cluster=orders_cluster, user=operator, mode="add-brokers", brokers=[3])
    plan_approve(plan=plan, user=approver)
    run_to_end(plan, fake_kafka)
    assert plan.state == PlanState.COMPLETED
    assert not BrokerDrain.objects.exists()


def test_detection_does_not_fill_a_drained_empty_broker(orders_cluster):
    # The `cluster` fixture: every replica on brokers 1 and 2, broker 3 empty and alive.
    drained(orders_cluster, 3)
    assert cluster_detect(cluster=orders_cluster) is None
    assert not Plan.objects.exists()


def test_detection_never_targets_a_drained_broker_when_healing(orders_cluster):
    policy = policy_get(cluster=orders_cluster)
    policy.dead_broker_grace = 0
    policy.save()
    cluster_apply(orders_cluster, FOUR, alive=(1, 2, 3, 4))
    cluster_apply(orders_cluster, FOUR, alive=(1, 3, 4))  # broker 2 died; 3 is drained (empty)
    drained(orders_cluster, 3)
    plan = cluster_detect(cluster=orders_cluster)
    assert plan is not None and plan.mode == PlanMode.FIX_OFFLINE
    added = {b for m in plan.moves.all() for b in m.added}
    assert added and 3 not in added


def test_an_operator_full_rebalance_leaves_a_drained_broker_empty(orders_cluster, operator):
    cluster_apply(orders_cluster, {("orders", i): [1] for i in range(6)})
    drained(orders_cluster, 3)
    plan = plan_request(cluster=orders_cluster, user=operator, mode="full")
    targets = {b for m in plan.moves.all() for b in m.replicas_after}
    assert 2 in targets and 3 not in targets


def test_a_request_placing_replicas_on_a_drained_broker_is_refused(orders_cluster, operator):
    drained(orders_cluster, 3)
    with pytest.raises(PlanRequestInvalid, match="broker 3 is drained: undrain it"):
        plan_request(cluster=orders_cluster, user=operator, mode="add-brokers", brokers=[3])
    assert not Plan.objects.exists()


def test_undrain_makes_the_broker_ordinary_and_detection_fills_it(orders_cluster, operator):
    drained(orders_cluster, 3, by=operator)
    assert cluster_detect(cluster=orders_cluster) is None

    broker_undrain(cluster=orders_cluster, node_id=3, user=operator, reason="back in service")
    assert not BrokerDrain.objects.exists()
    event = AuditEvent.objects.get(action="broker.undrained")
    assert event.actor == "olga" and event.reason == "back in service"
    assert event.before["drained_by"] == "olga" and event.after == {"node_id": 3, "drained": False}

    plan = cluster_detect(cluster=orders_cluster)
    assert plan is not None and plan.mode == PlanMode.ADD_BROKERS and plan.brokers == [3]


def test_undrain_refuses_bad_input_and_changes_nothing(orders_cluster, operator, viewer):
    drained(orders_cluster, 3)
    with pytest.raises(PlanPermissionDenied):
        broker_undrain(cluster=orders_cluster, node_id=3, user=viewer)
    with pytest.raises(PlanRequestInvalid, match="broker 2 of prod is not drained"):
        broker_undrain(cluster=orders_cluster, node_id=2, user=operator)
    with pytest.raises(PlanRequestInvalid, match="must be an integer"):
        broker_undrain(cluster=orders_cluster, node_id="3", user=operator)
    assert BrokerDrain.objects.filter(node_id=3).exists()
    assert not AuditEvent.objects.filter(action="broker.undrained").exists()


# The metrics topic as the sampler creates it on 3 brokers: RF min(3, brokers) = 3.
METRICS_RF3 = {(METRICS, i): [[1, 2, 3], [2, 3, 1], [3, 1, 2]][i % 3] for i in range(6)}


def test_the_metrics_topic_does_not_block_draining_one_of_three_brokers(orders_cluster, operator):
    cluster_apply(orders_cluster, BALANCED | METRICS_RF3)
    plan = plan_request(cluster=orders_cluster, user=operator, mode="remove-brokers", brokers=[3])
    after = {(m.topic, m.partition): m.replicas_after for m in plan.moves.all()}
    for key, replicas in (BALANCED | METRICS_RF3).items():
        assert 3 not in after.get(key, replicas), key
    # Its RF is lowered to the two brokers left, keeping the replicas that stay in order.
    assert after[(METRICS, 0)] == [1, 2] and after[(METRICS, 1)] == [2, 1]
    assert sorted(after[(METRICS, 2)]) == [1, 2]
    # Those that lost their leader are led so the drain leaves leadership even.
    leaders = [after.get(k, r)[0] for k, r in (BALANCED | METRICS_RF3).items()]
    assert abs(leaders.count(1) - leaders.count(2)) <= 1, leaders
    assert "replication factor lowered from 3 to 2" in plan.report["rf_lowered"]["note"]


def test_the_metrics_topic_follows_a_drain_even_when_the_policy_excludes_it(
    orders_cluster, operator, admin_member
):
    policy_set(orders_cluster, admin_member, topics_exclude=["__*"])
    cluster_apply(orders_cluster, BALANCED | {(METRICS, i): [3, 1] for i in range(3)})
    plan = plan_request(cluster=orders_cluster, user=operator, mode="remove-brokers", brokers=[3])
    moved = {(m.topic, m.partition): m.replicas_after for m in plan.moves.all()}
    for i in range(3):
        assert 3 not in moved[(METRICS, i)] and len(moved[(METRICS, i)]) == 2


def test_a_user_topic_with_rf3_on_three_brokers_still_refuses_the_drain(orders_cluster, operator):
    cluster_apply(orders_cluster, METRICS_RF3 | {("payments", 0): [1, 2, 3]})
    with pytest.raises(PlanRequestInvalid, match="payments-0 has 3 replicas but only 2"):
        plan_request(cluster=orders_cluster, user=operator, mode="remove-brokers", brokers=[3])
    assert not Plan.objects.exists()


def test_a_drained_broker_is_drained_again_with_what_landed_on_it(orders_cluster, operator):
    # A topic created after the drain: Kafka placed replicas on drained broker 3.
    cluster_apply(orders_cluster, FOUR | {("late", 0): [3, 1]}, alive=(1, 2, 3, 4))
    drained(orders_cluster, 3)
    plan = plan_request(cluster=orders_cluster, user=operator, mode="remove-brokers", brokers=[2])
    assert plan.brokers == [2]
    moves = {(m.topic, m.partition): m for m in plan.moves.all()}
    assert ("late", 0) in moves
    for m in moves.values():
        assert 3 not in m.replicas_after and 2 not in m.replicas_after


def test_the_plan_page_says_the_metrics_topic_rf_is_lowered(client, orders_cluster, operator):
    cluster_apply(orders_cluster, BALANCED | METRICS_RF3)
    plan = plan_request(cluster=orders_cluster, user=operator, mode="remove-brokers", brokers=[3])
    client.force_login(operator)
    body = client.get(f"/clusters/prod/plans/{plan.pk}/").content.decode()
    assert 'id="plan-rf-lowered"' in body
    assert "replication factor lowered from 3 to 2 on 6 partition(s)" in body


def test_a_simulated_drain_sees_what_a_requested_one_sees(orders_cluster):
    from apps.plans.whatif import whatif_simulate

    cluster_apply(orders_cluster, BALANCED | METRICS_RF3)
    simulated = whatif_simulate(cluster=orders_cluster, remove_brokers=[3])
    assert all(3 not in e["replicas"] for e in simulated.plan["partitions"])
    assert "lowered from 3 to 2" in simulated.report["rf_lowered"]["note"]
    drained(orders_cluster, 2)
    with pytest.raises(PlanRequestInvalid, match="broker 2 exists and is drained"):
        whatif_simulate(cluster=orders_cluster, add_brokers=[{"id": 2, "rack": "b"}])
