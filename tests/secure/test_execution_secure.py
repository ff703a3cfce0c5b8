"""A plan executed end to end on the secured dev cluster, as the balancer's principal:
throttles set and removed, reassignments, preferred leader election; and the message a
principal missing Alter on the cluster gets."""

import uuid

import pytest
from confluent_kafka import Producer
from devkit import live

from apps.clusters.services import cluster_sync
from apps.plans.executor import execution_run, execution_step
from apps.plans.models import PlanState
from apps.plans.services import plan_approve, plan_request
from tests.secure.conftest import cluster_register_secured, leftovers_clean
from tests.support.factories import policy_set

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

# Six partitions on brokers 1 and 2 only; the plan moves load onto broker 3.
ON_ONE_AND_TWO = [[1, 2], [2, 1]] * 3


@pytest.fixture
def topic(secure_cluster, super_admin):
    name = f"it-secure-exec-{uuid.uuid4().hex[:8]}"
    config = secure_cluster.admin_config()
    live.topic_create(super_admin, name, assignment=ON_ONE_AND_TWO, config=config)
    producer = Producer({**secure_cluster.admin_config(), "linger.ms": 20})
    for p in range(len(ON_ONE_AND_TWO)):
        for _ in range(128):
            producer.produce(name, b"x" * 1024, partition=p)
    assert producer.flush(60) == 0
    yield name
    leftovers_clean(secure_cluster, [name])
    super_admin.delete_topics([name])[name].result(30)


def plan_approved(cluster, user, topic):
    assert cluster_sync(cluster=cluster), cluster.last_sync_error
    policy_set(
        cluster, user, topics_include=[topic], four_eyes=False, throttle_bytes_per_sec=20_000_000
    )
    plan = plan_request(cluster=cluster, user=user, mode="add-brokers", brokers=[3])
    plan_approve(plan=plan, user=user)
    return plan


def test_it_executes_a_throttled_plan_and_elects_the_preferred_leaders(
    secured, super_admin, topic, admin_user
):
    plan = plan_approved(secured, admin_user, topic)
    targets = live.plan_targets(plan)
    assert targets and all(3 in r for r in targets.values())

    execution_step(plan=plan)  # starts, sets throttles, sends the first batch
    throttles = live.throttles_set(super_admin, [topic])
    assert throttles.get("3:follower.replication.throttled.rate") == "20000000"

    plan = execution_run(plan=plan, poll_interval=0.5, max_seconds=120)

    assert plan.state == PlanState.COMPLETED, plan.error
    now = live.replicas_in_sync(super_admin, topic, 30)
    for key, replicas in targets.items():
        assert now[key][0] == replicas
        assert now[key][2] == replicas[0]  # preferred leader elected
    live.no_throttles_left(super_admin, [topic])


def test_it_names_the_missing_alter_on_the_cluster_in_the_plan_failure(
    secure_cluster, super_admin, topic, admin_user
):
    cluster = cluster_register_secured(
        secure_cluster, listener="SASL_SSL", principal="balancer-no-alter"
    )
    plan = plan_approved(cluster, admin_user, topic)

    plan = execution_run(plan=plan, poll_interval=0.5, max_seconds=60)

    assert plan.state == PlanState.FAILED
    assert "needs Alter on Cluster 'kafka-cluster' (AlterPartitionReassignments)" in plan.error
    assert "Request" not in plan.error  # not kafka-python's request dump
    live.no_throttles_left(super_admin, [topic])
