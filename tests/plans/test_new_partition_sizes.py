"""Partitions no window measured yet take their size from their logs at proposal time."""

import pytest

from apps.clusters.models import Cluster
from apps.kafka_layer import executor_ops
from apps.plans import kafka_ops
from apps.plans.kafka_ops import KafkaOpError
from apps.plans.models import ClusterPolicy, PlanMode, PlanState
from apps.plans.services import cluster_detect, policy_get
from apps.plans.services import sizes as sizes_module
from tests.plans.fakes import FakeKafka
from tests.support.factories import cluster_apply

pytestmark = pytest.mark.django_db

# Beside a balanced topic, all six partitions of a new topic on broker 1 (RF 1);
# nothing measured yet.
NEW_TOPIC = {
    **{("orders", i): [[1, 2], [2, 3], [3, 1]][i % 3] for i in range(6)},
    **{("fresh", i): [1] for i in range(6)},
}


def auto_approve_up_to(cluster, max_bytes: int) -> None:
    policy = policy_get(cluster=cluster)
    ClusterPolicy.objects.filter(pk=policy.pk).update(auto_approve_max_bytes=max_bytes)


def kafka_with(monkeypatch, kafka) -> None:
    monkeypatch.setattr(
        sizes_module, "kafka_ops_resolve", lambda **kw: kafka or kafka_ops.kafka_ops_resolve(**kw)
    )


def test_it_sizes_new_partitions_from_their_logs_so_auto_approval_decides(
    orders_cluster, monkeypatch
):
    cluster_apply(orders_cluster, NEW_TOPIC)
    auto_approve_up_to(orders_cluster, 10_000_000)
    kafka_with(monkeypatch, FakeKafka(assignment=NEW_TOPIC, sizes=dict.fromkeys(NEW_TOPIC, 1_000)))

    plan = cluster_detect(cluster=orders_cluster)

    assert plan is not None and plan.mode == PlanMode.FULL
    plan.refresh_from_db()
    assert plan.report["sizes_known"] is True
    assert plan.bytes_to_move == 1_000 * plan.moves.count() > 0
    assert plan.state == PlanState.APPROVED and plan.decided_by_policy


def test_it_refuses_auto_approval_when_new_partitions_are_too_big(orders_cluster, monkeypatch):
    cluster_apply(orders_cluster, NEW_TOPIC)
    auto_approve_up_to(orders_cluster, 10_000_000)
    kafka_with(
        monkeypatch, FakeKafka(assignment=NEW_TOPIC, sizes=dict.fromkeys(NEW_TOPIC, 50_000_000))
    )

    plan = cluster_detect(cluster=orders_cluster)

    assert plan.report["sizes_known"] is True
    assert plan.state == PlanState.PROPOSED


def test_it_leaves_sizes_unknown_when_kafka_cannot_tell(orders_cluster, monkeypatch):
    cluster_apply(orders_cluster, NEW_TOPIC)
    auto_approve_up_to(orders_cluster, 10_000_000)

    class Unreachable(FakeKafka):
        def replica_sizes(self):
            raise KafkaOpError("DescribeLogDirs failed: timed out")

    kafka_with(monkeypatch, Unreachable(assignment=NEW_TOPIC))

    plan = cluster_detect(cluster=orders_cluster)

    assert plan.report["sizes_known"] is False
    assert plan.state == PlanState.PROPOSED


def test_it_reads_log_sizes_without_building_a_librdkafka_client(
    orders_cluster, monkeypatch, settings
):
    # The live operations on an unreachable cluster: DescribeLogDirs is kafka-python's,
    # so no confluent-kafka client (and its threads, reconnecting every second) is made.
    settings.KAFKA_CONNECT_TIMEOUT = 0.5
    Cluster.objects.filter(pk=orders_cluster.pk).update(bootstrap_servers="127.0.0.1:1")
    orders_cluster.refresh_from_db()
    cluster_apply(orders_cluster, NEW_TOPIC)
    auto_approve_up_to(orders_cluster, 10_000_000)
    kafka_with(monkeypatch, None)  # the live operations, not the unit tests' stand-in
    built = []
    monkeypatch.setattr(executor_ops, "admin_client_create", lambda **kw: built.append(kw))

    plan = cluster_detect(cluster=orders_cluster)

    assert plan.report["sizes_known"] is False
    assert built == []
