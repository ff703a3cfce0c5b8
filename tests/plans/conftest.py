"""Fixtures for plan tests: a synced cluster model and a fake Kafka, and for the live
ones an admin client and topics cleaned up afterwards (users: tests/conftest.py)."""

import pytest
from devkit import live
from django.utils import timezone

from apps.clusters.models import Cluster
from apps.clusters.services import cluster_state_apply
from apps.kafka_layer.clients import admin_client_create
from apps.kafka_layer.cluster_state import BrokerState, ClusterState, PartitionState, TopicState
from tests.plans.fakes import FakeKafka


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


@pytest.fixture(autouse=True)
def no_loads_wait(settings):
    """Most detection tests plan on counts without a window: they would wait for loads
    (PLAN_LOADS_WAIT_SECONDS) first. test_loads_wait.py tests the wait itself."""
    settings.PLAN_LOADS_WAIT_SECONDS = 0


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


@pytest.fixture
def admin(kafka_cluster):
    """An admin client of the real dev cluster."""
    return admin_client_create(bootstrap_servers=kafka_cluster.bootstrap_servers)


@pytest.fixture
def topics(admin, kafka_cluster):
    """Names of the topics a live test creates: cleaned up and deleted afterwards."""
    names: list[str] = []
    yield names
    live.leftovers_clean(kafka_cluster.bootstrap_servers, names)
    live.topics_delete(admin, names)
