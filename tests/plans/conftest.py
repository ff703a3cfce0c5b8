"""Fixtures for plan tests: a synced cluster model and a fake Kafka (users: tests/conftest.py)."""

import pytest
from django.utils import timezone

from apps.clusters.models import Cluster
from apps.clusters.services import (
    BrokerState,
    ClusterState,
    PartitionState,
    TopicState,
    cluster_state_apply,
)

from .fakes import FakeKafka


def state_of(
    assignment: dict[tuple[str, int], list[int]],
    alive=(1, 2, 3),
    isr: dict | None = None,
) -> ClusterState:
    topics: dict[str, list[PartitionState]] = {}
    for (topic, index), replicas in sorted(assignment.items()):
        in_sync = (isr or {}).get((topic, index), [b for b in replicas if b in alive])
        leader = next((b for b in replicas if b in in_sync), None)
        topics.setdefault(topic, []).append(
            PartitionState(index=index, leader=leader, replicas=replicas, isr=in_sync)
        )
    return ClusterState(
        cluster_id="fake",
        controller_id=100,
        brokers=[
            BrokerState(node_id=b, host="127.0.0.1", port=29090 + b, rack="abcdef"[b - 1])
            for b in alive
        ],
        topics=[TopicState(name=t, internal=False, partitions=ps) for t, ps in topics.items()],
    )


@pytest.fixture
def apply_state():
    def apply(cluster: Cluster, assignment, alive=(1, 2, 3), now=None, isr=None):
        cluster_state_apply(
            cluster=cluster, state=state_of(assignment, alive, isr), now=now or timezone.now()
        )

    return apply


# 6 partitions, all on brokers 1 and 2: broker 3 holds nothing.
SKEWED = {("orders", i): [1 + i % 2, 2 - i % 2] for i in range(6)}


@pytest.fixture
def cluster(apply_state) -> Cluster:
    cluster = Cluster.objects.create(name="prod", bootstrap_servers="fake:9092")
    apply_state(cluster, SKEWED)
    return cluster


@pytest.fixture
def fake_kafka() -> FakeKafka:
    return FakeKafka(assignment={k: list(v) for k, v in SKEWED.items()})
