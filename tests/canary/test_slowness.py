"""Slow-broker healing with Kafka faked: the broker in every canary partition out of its
band and in none within it is the suspect; six rounds in a row report it slow (audited),
the periodic balancer proposes to demote it, auto-approved as self-healing when the
policy says so; a broker leading far more than its peers is not called slow; six
rounds in band clear the flag."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.canary.band_updates import BrokerJudgement
from apps.canary.models import CanaryBand
from apps.canary.slowness import canary_slowness_update, slow_suspects
from apps.clusters.models import Broker, Cluster
from apps.plans.models import ClusterPolicy, PlanMode, PlanState, SlowBroker
from apps.plans.services import cluster_detect, policy_get
from tests.support.factories import cluster_apply

# each broker leads its canary partition, followed by the next broker
REPLICAS = {1: [1, 2], 2: [2, 3], 3: [3, 1]}
BALANCED = {("orders", i): [[1, 2, 3], [2, 3, 1], [3, 1, 2]][i % 3] for i in range(9)}


def _round(p99s: dict[int, float]) -> list[BrokerJudgement]:
    return [
        BrokerJudgement(broker_id=b, sent=5, acked=5, p99_ms=v, top_ms=100.0)
        for b, v in p99s.items()
    ]


def test_it_suspects_the_broker_in_every_slow_partition_and_no_fast_one() -> None:
    # broker 2 stalls: its own partition and broker 1's (which it follows in) are slow
    assert slow_suspects(judged=_round({1: 400, 2: 420, 3: 50}), replicas=REPLICAS) == {2}
    # broker 3 is in a slow partition and a fast one: not the cause
    assert slow_suspects(judged=_round({1: 50, 2: 400, 3: 50}), replicas=REPLICAS) == set()
    # nothing fast to compare with: no suspect
    assert slow_suspects(judged=_round({1: 400, 2: 400, 3: 400}), replicas=REPLICAS) == set()
    assert slow_suspects(judged=_round({1: 50, 2: 50, 3: 50}), replicas=REPLICAS) == set()


@pytest.fixture
def cluster(db, settings):
    settings.CANARY_SLOW_ROUNDS = 3
    orders_cluster = Cluster.objects.create(name="prod", bootstrap_servers="fake:9092")
    cluster_apply(orders_cluster, BALANCED)
    for b in (1, 2, 3):
        CanaryBand.objects.create(
            cluster=orders_cluster, broker_id=b, top_ms=100.0, changed_at=timezone.now()
        )
    return orders_cluster


def _rounds(cluster, p99s: dict[int, float], n: int) -> None:
    for _ in range(n):
        canary_slowness_update(cluster=cluster, judged=_round(p99s), replicas=REPLICAS)


@pytest.mark.django_db
def test_it_reports_a_slow_broker_and_the_balancer_demotes_it(cluster) -> None:
    ClusterPolicy.objects.filter(pk=policy_get(cluster=cluster).pk).update(
        auto_approve_self_healing=True
    )
    _rounds(cluster, {1: 400, 2: 420, 3: 50}, 2)
    assert not SlowBroker.objects.exists()  # two rounds are not yet three

    _rounds(cluster, {1: 400, 2: 420, 3: 50}, 1)

    flag = SlowBroker.objects.get(cluster=cluster)
    assert flag.node_id == 2 and "420 ms" in flag.reason
    assert AuditEvent.objects.get(action="broker.slow").actor == "canary"
    plan = cluster_detect(cluster=cluster)
    assert plan is not None and plan.mode == PlanMode.DEMOTE and plan.brokers == [2]
    assert plan.trigger.startswith("broker 2 slow: canary p99 420 ms")
    assert plan.state == PlanState.APPROVED and plan.decided_by_policy
    assert plan.bytes_to_move == 0
    for entry in plan.reassignment["partitions"]:
        assert entry["replicas"][0] != 2


@pytest.mark.django_db
def test_it_clears_the_flag_after_as_many_rounds_in_band(cluster) -> None:
    _rounds(cluster, {1: 400, 2: 420, 3: 50}, 3)
    _rounds(cluster, {1: 50, 2: 50, 3: 50}, 2)
    assert SlowBroker.objects.exists()
    _rounds(cluster, {1: 50, 2: 50, 3: 50}, 1)
    assert not SlowBroker.objects.exists()
    assert AuditEvent.objects.filter(action="broker.not_slow").count() == 1


@pytest.mark.django_db
def test_it_does_not_call_a_broker_slow_when_its_load_may_explain_it(cluster) -> None:
    Broker.objects.filter(cluster=cluster, node_id=2).update(leaders_count=30)
    Broker.objects.filter(cluster=cluster).exclude(node_id=2).update(leaders_count=3)

    _rounds(cluster, {1: 400, 2: 420, 3: 50}, 5)

    assert not SlowBroker.objects.exists()
