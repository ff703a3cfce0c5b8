"""Demotions that hold: a completed demote plan marks its brokers demoted, no plan
(requested or detected) gives them leadership until an operator undemotes them, and
both are audited (on a synced model, with an in-memory Kafka)."""

import pytest
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.plans.errors import PlanPermissionDenied, PlanRequestInvalid
from apps.plans.models import BrokerDemotion, PlanState
from apps.plans.selectors import demoted_brokers_list
from apps.plans.services import broker_undemote, plan_approve, plan_request
from tests.plans.fakes import FakeKafka, run_to_end
from tests.support.factories import cluster_apply

pytestmark = pytest.mark.django_db

# Broker 2 leads a third of the partitions.
BALANCED = {("orders", i): [[1, 2, 3], [2, 3, 1], [3, 1, 2]][i % 3] for i in range(9)}


def _leaders(assignment: dict) -> dict[int, int]:
    out: dict[int, int] = {}
    for reps in assignment.values():
        out[reps[0]] = out.get(reps[0], 0) + 1
    return out


def test_a_completed_demotion_keeps_leadership_off_and_the_broker_last(
    orders_cluster, operator, approver
):
    cluster_apply(orders_cluster, BALANCED)
    kafka = FakeKafka(assignment={k: list(v) for k, v in BALANCED.items()})
    plan = plan_request(cluster=orders_cluster, user=operator, mode="demote", brokers=[2])
    assert plan.bytes_to_move == 0
    plan_approve(plan=plan, user=approver)
    assert not BrokerDemotion.objects.exists()  # approved is not demoted yet
    run_to_end(plan, kafka)
    assert plan.state == PlanState.COMPLETED

    assert 2 not in _leaders(kafka.assignment)
    assert all(reps[-1] == 2 for reps in kafka.assignment.values())
    [demotion] = demoted_brokers_list(cluster=orders_cluster)
    assert (demotion.node_id, demotion.demoted_by, demotion.plan_id) == (2, "olga", plan.pk)
    event = AuditEvent.objects.get(action="broker.demoted")
    assert event.after["node_id"] == 2 and event.after["plan"] == plan.pk


def test_a_later_plan_of_any_mode_gives_a_demoted_broker_no_leadership(orders_cluster, operator):
    # broker 2 demoted, leading nothing; broker 1 leads too much
    skewed = {("orders", i): [[1, 3, 2], [1, 3, 2], [3, 1, 2]][i % 3] for i in range(9)}
    cluster_apply(orders_cluster, skewed)
    BrokerDemotion.objects.create(cluster=orders_cluster, node_id=2, demoted_at=timezone.now())

    for mode in ("full", "leaders"):
        plan = plan_request(cluster=orders_cluster, user=operator, mode=mode)
        after = {
            (e["topic"], e["partition"]): e["replicas"] for e in plan.reassignment["partitions"]
        }
        final = {k: after.get(k, v) for k, v in skewed.items()}
        assert 2 not in _leaders(final), (mode, final)
        plan.delete()


def test_an_undemoted_broker_may_lead_again(orders_cluster, operator):
    skewed = {("orders", i): [[1, 3, 2], [3, 1, 2]][i % 2] for i in range(8)}
    cluster_apply(orders_cluster, skewed)
    BrokerDemotion.objects.create(cluster=orders_cluster, node_id=2, demoted_at=timezone.now())
    with pytest.raises(PlanRequestInvalid, match="nothing to change"):
        plan_request(cluster=orders_cluster, user=operator, mode="leaders")

    broker_undemote(cluster=orders_cluster, node_id=2, user=operator, reason="back from repair")

    plan = plan_request(cluster=orders_cluster, user=operator, mode="leaders")
    leaders = _leaders(
        {(e["topic"], e["partition"]): e["replicas"] for e in plan.reassignment["partitions"]}
    )
    assert leaders.get(2, 0) > 0
    event = AuditEvent.objects.get(action="broker.undemoted")
    assert event.reason == "back from repair" and event.before["node_id"] == 2


def test_it_refuses_to_undemote_a_broker_not_demoted_or_without_the_grant(
    orders_cluster, operator, viewer
):
    with pytest.raises(PlanRequestInvalid, match="is not demoted"):
        broker_undemote(cluster=orders_cluster, node_id=2, user=operator)
    BrokerDemotion.objects.create(cluster=orders_cluster, node_id=2, demoted_at=timezone.now())
    with pytest.raises(PlanPermissionDenied):
        broker_undemote(cluster=orders_cluster, node_id=2, user=viewer)
    assert BrokerDemotion.objects.filter(node_id=2).exists()
    assert not AuditEvent.objects.filter(action="broker.undemoted").exists()


def test_it_refuses_to_demote_every_broker(orders_cluster, operator):
    cluster_apply(orders_cluster, BALANCED)
    with pytest.raises(PlanRequestInvalid, match="none is left to lead"):
        plan_request(cluster=orders_cluster, user=operator, mode="demote", brokers=[1, 2, 3])
    with pytest.raises(PlanRequestInvalid, match="needs the broker ids"):
        plan_request(cluster=orders_cluster, user=operator, mode="demote")
