"""Smoke test on the Kafka 3.x line (`up --kafka-version 3.9`): the balancer's sync, replica
sizes (DescribeLogDirs v4 there, v5 on 4.3) and one plan executed by the real executor, as
on the pinned 4.x cluster."""

from __future__ import annotations

import pytest
from dev_cluster import DevCluster
from devkit import live

from apps.clusters.models import Partition
from apps.kafka_layer.clients import admin_client_create
from apps.kafka_layer.kafka_python_adapter import log_sizes_describe
from apps.plans.executor import execution_run
from apps.plans.models import MoveState, PlanState
from apps.plans.services import plan_approve, plan_request

pytestmark = [pytest.mark.django_db, pytest.mark.integration, pytest.mark.own_stack]

ON_ONE_AND_TWO = [[1, 2], [2, 1]] * 3  # the plan moves load onto broker 3


def test_it_syncs_and_executes_a_move_on_kafka_3_9(kafka39_cluster: DevCluster, admin_user):
    cluster39 = kafka39_cluster
    assert cluster39.kafka.release.startswith("3.9.")
    # The brokers say so themselves, not just our options.
    assert f"Kafka version: {cluster39.kafka.release}" in cluster39.log_file(1).read_text()
    bootstrap = cluster39.bootstrap_servers
    admin = admin_client_create(bootstrap_servers=bootstrap)
    topic = live.topic_name("k39")
    live.topic_create(admin, topic, assignment=ON_ONE_AND_TWO)
    try:
        live.fill(bootstrap, topic, 6, 64 * 1024)
        # Every replica's log holds the 64 KiB written (and its batch headers).
        sizes = log_sizes_describe(bootstrap_servers=bootstrap)
        for index, replicas in enumerate(ON_ONE_AND_TWO):
            for broker in replicas:
                assert 64 * 1024 <= sizes[broker][(topic, index)] < 2 * 64 * 1024
            assert (topic, index) not in sizes[3]

        cluster = live.cluster_registered(
            bootstrap, admin_user, [topic], four_eyes=False, throttle_bytes_per_sec=20_000_000
        )

        brokers = list(cluster.brokers.order_by("node_id").values_list("node_id", "rack", "alive"))
        assert brokers == [(1, "a", True), (2, "b", True), (3, "c", True)]
        synced = {p.index: p.replicas for p in Partition.objects.filter(topic__name=topic)}
        assert synced == dict(enumerate(ON_ONE_AND_TWO))

        plan = plan_request(cluster=cluster, user=admin_user, mode="add-brokers", brokers=[3])
        plan_approve(plan=plan, user=admin_user)
        targets = live.plan_targets(plan)
        assert targets and all(3 in r for r in targets.values())
        plan = execution_run(plan=plan, poll_interval=0.5, max_seconds=120)

        assert plan.state == PlanState.COMPLETED, plan.error
        now = live.replicas_in_sync(admin, topic, 30)
        for key, replicas in targets.items():
            assert now[key][0] == replicas
        assert set(plan.moves.values_list("state", flat=True)) == {MoveState.DONE}
        assert not live.in_flight(bootstrap, [topic])
        live.no_throttles_left(admin, [topic])
    finally:
        live.leftovers_clean(bootstrap, [topic])
        live.topics_delete(admin, [topic])
