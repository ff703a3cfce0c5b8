"""A plan's reassignment may name each replica's log dir (Kafka's `log_dirs`): the moves
keep them, and a bad list is refused with nothing stored."""

import pytest

from apps.plans.errors import PlanRequestInvalid
from apps.plans.models import Plan, PlanMove
from apps.plans.services import plan_create
from tests.support.factories import cluster_apply

pytestmark = pytest.mark.django_db


def _create(cluster, actor, entry):
    cluster_apply(cluster, {("t", 0): [1, 2]})
    return plan_create(
        cluster=cluster,
        origin="operator",
        mode="full",
        reassignment={"version": 1, "partitions": [entry]},
        assignment_before={("t", 0): [1, 2]},
        report={},
        actor=actor,
    )


def test_it_keeps_each_replicas_target_dir(orders_cluster, admin_member):
    entry = {"topic": "t", "partition": 0, "replicas": [1, 3], "log_dirs": ["/d/b", "any"]}
    plan = _create(orders_cluster, admin_member, entry)
    move = PlanMove.objects.get(plan=plan)
    assert move.log_dirs_after == ["/d/b", "any"]
    assert move.disk_targets == {("t", 0, 1): "/d/b"}
    assert move.disk_sources == {}


def test_it_keeps_an_intra_broker_move(orders_cluster, admin_member):
    entry = {"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "/d/a"]}
    move = PlanMove.objects.get(plan=_create(orders_cluster, admin_member, entry))
    assert move.replicas_before == move.replicas_after == [1, 2]
    assert move.disk_targets == {("t", 0, 2): "/d/a"}


def test_it_refuses_log_dirs_not_aligned_with_the_replicas(orders_cluster, admin_member):
    entry = {"topic": "t", "partition": 0, "replicas": [1, 3], "log_dirs": ["/d/b"]}
    with pytest.raises(PlanRequestInvalid, match="one dir"):
        _create(orders_cluster, admin_member, entry)
    assert not Plan.objects.exists()
