"""End to end on the JBOD dev cluster: one disk skewed, a full rebalance planned and
executed, and both levels balanced after (brokers and the dirs of each broker)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dev_cluster import DevCluster
from devkit import live
from devkit.polling import wait_until
from django.utils import timezone

from apps.kafka_layer.clients import admin_client_create
from apps.kafka_layer.connection import ConnectionSettings
from apps.kafka_layer.kafka_python_adapter import log_dirs_describe
from apps.plans.executor import execution_run
from apps.plans.kafka_ops import LiveKafka
from apps.plans.models import PlanState
from apps.plans.services import plan_approve, plan_request
from tests.support.factories import loads_make

pytestmark = [pytest.mark.django_db, pytest.mark.integration, pytest.mark.own_stack]

ASSIGNMENT = [[1, 2], [2, 3], [3, 1]] * 4


def test_it_balances_a_skewed_disk_and_the_brokers(kafka_jbod_cluster: DevCluster, admin_user):
    jbod = kafka_jbod_cluster
    bootstrap = jbod.bootstrap_servers
    admin = admin_client_create(bootstrap_servers=bootstrap)
    topic = live.topic_name("jbodbal")
    live.topic_create(admin, topic, assignment=ASSIGNMENT)
    kafka = LiveKafka(connection=ConnectionSettings(bootstrap_servers=bootstrap))
    try:
        live.fill(bootstrap, topic, len(ASSIGNMENT), 256 * 1024)
        # Skew: every replica of broker 1 into its first dir.
        first = str(jbod.data_dirs(1)[0])
        skew = {r: first for r in kafka.replica_log_dirs() if r[0] == topic and r[2] == 1}
        kafka.replica_log_dirs_alter(skew)
        wait_until(
            lambda: all(kafka.replica_log_dirs().get(r) == first for r in skew),
            timeout=60,
            what="broker 1's replicas all in one dir",
        )
        cluster = live.cluster_registered(bootstrap, admin_user, [topic], four_eyes=False)
        # A window of loads as the aggregation writes it, each partition's size the one
        # its replicas' logs have (the factory stores bytes in x 3600 as the size).
        sizes = log_dirs_describe(bootstrap_servers=bootstrap)[1].sizes
        placed = {(topic, i): replicas for i, replicas in enumerate(ASSIGNMENT)}
        size = max(v for k, v in sizes.items() if k[0] == topic)
        loads_make(
            cluster,
            timezone.now() - timedelta(seconds=60),
            {key: (size / 3600, 0.0, 1.0) for key in placed},
            assignment=placed,
        )
        plan = plan_request(cluster=cluster, user=admin_user, mode="full")
        assert any(m.log_dirs_after for m in plan.moves.all()), "the plan names no dirs"
        plan_approve(plan=plan, user=admin_user)
        plan = execution_run(plan=plan, poll_interval=0.5, max_seconds=300)
        assert plan.state == PlanState.COMPLETED

        described = log_dirs_describe(bootstrap_servers=bootstrap)
        totals = {b: sum(d.used_bytes()) for b, d in described.items()}
        assert max(totals.values()) <= 1.3 * min(totals.values()), totals
        for broker, dirs in described.items():
            used = dirs.used_bytes()
            assert max(used) <= 1.5 * max(min(used), 1), (broker, used)
    finally:
        live.topics_delete(admin, [topic])
