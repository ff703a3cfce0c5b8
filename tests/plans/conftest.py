"""Fixtures for plan tests: a synced cluster model of SKEWED and a fake Kafka, and for the live
ones an admin client and topics cleaned up afterwards (users: tests/conftest.py)."""

import pytest
from devkit import live
from devkit.live import FRESH_METADATA

from apps.clusters.models import Cluster
from apps.kafka_layer.clients import admin_client_create
from tests.plans.fakes import FakeKafka
from tests.support.factories import cluster_apply


@pytest.fixture(autouse=True)
def no_loads_wait(settings):
    """Most detection tests plan on counts without a window: they would wait for loads
    (PLAN_LOADS_WAIT_SECONDS) first. test_loads_wait.py tests the wait itself."""
    settings.PLAN_LOADS_WAIT_SECONDS = 0


# 6 partitions, all on brokers 1 and 2: broker 3 holds nothing.
SKEWED = {("orders", i): [1 + i % 2, 2 - i % 2] for i in range(6)}


@pytest.fixture
def orders_cluster() -> Cluster:
    """A synced model of SKEWED alone (the suite's `cluster` also has audit-log)."""
    cluster = Cluster.objects.create(name="prod", bootstrap_servers="fake:9092")
    cluster_apply(cluster, SKEWED)
    return cluster


@pytest.fixture
def fake_kafka() -> FakeKafka:
    return FakeKafka(assignment={k: list(v) for k, v in SKEWED.items()})


@pytest.fixture
def admin(kafka_cluster):
    """An admin client of the real dev cluster, learning the live brokers every second:
    with a broker stopped, librdkafka keeps sending controller-bound requests to the one
    it last learnt as the controller until its metadata refreshes (5 min by default;
    "Timed out waiting for controller" for 60 s in a loaded run)."""
    return admin_client_create(
        bootstrap_servers=kafka_cluster.bootstrap_servers, extra=FRESH_METADATA
    )


@pytest.fixture
def topics(admin, kafka_cluster):
    """Names of the topics a live test creates: cleaned up and deleted afterwards."""
    names: list[str] = []
    yield names
    live.leftovers_clean(kafka_cluster.bootstrap_servers, names)
    live.topics_delete(admin, names)
