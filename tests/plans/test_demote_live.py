"""A demotion on the real dev cluster: the demote plan executes with no data copied,
Kafka then reports the demoted broker leading none of the topic's partitions and last
in each replica list, and a plan requested afterwards keeps it so."""

import pytest
from devkit import live

from apps.clusters.services import cluster_sync
from apps.plans.errors import PlanRequestInvalid
from apps.plans.executor import execution_run
from apps.plans.models import BrokerDemotion, PlanState
from apps.plans.services import plan_approve, plan_request

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

DEMOTED = 2


def test_it_moves_leadership_off_a_demoted_broker_and_keeps_it_off(
    kafka_cluster, admin, topics, admin_user
):
    topic = live.topic_name("demote")
    topics.append(topic)
    live.topic_create(admin, topic, assignment=[[1, 2, 3], [2, 3, 1], [3, 1, 2]] * 2)
    cluster = live.cluster_registered(
        kafka_cluster.bootstrap_servers, admin_user, [topic], four_eyes=False
    )
    plan = plan_request(cluster=cluster, user=admin_user, mode="demote", brokers=[DEMOTED])
    assert plan.bytes_to_move == 0
    plan_approve(plan=plan, user=admin_user)
    plan = execution_run(plan=plan, poll_interval=0.5, max_seconds=120)
    assert plan.state == PlanState.COMPLETED, plan.error

    now = live.replicas_in_sync(admin, topic, 30)
    assert all(leader != DEMOTED for _, _, leader in now.values()), now
    assert all(replicas[-1] == DEMOTED for replicas, _, _ in now.values()), now
    assert BrokerDemotion.objects.filter(cluster=cluster, node_id=DEMOTED).exists()

    # a rebalance asked for afterwards leaves leadership off it
    assert cluster_sync(cluster=cluster)
    try:
        later = plan_request(cluster=cluster, user=admin_user, mode="leaders")
    except PlanRequestInvalid as exc:  # the leaders are level without it
        assert "nothing to change" in str(exc), exc
    else:
        for entry in later.reassignment["partitions"]:
            assert entry["replicas"][0] != DEMOTED, entry
