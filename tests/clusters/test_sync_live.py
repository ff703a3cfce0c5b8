"""Sync against the real local Kafka cluster, including a broker stop and start."""

import uuid

import pytest
from devkit import live
from devkit.polling import wait_until

from apps.clusters.models import Cluster, Partition
from apps.clusters.services import cluster_register, cluster_sync
from apps.clusters.sync_outcome import SyncOutcome
from apps.kafka_layer.clients import admin_client_create

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


@pytest.fixture
def live_topic(kafka_cluster):
    admin = admin_client_create(bootstrap_servers=kafka_cluster.bootstrap_servers)
    name = f"it-sync-{uuid.uuid4().hex[:8]}"
    live.topic_create(admin, name, partitions=6, rf=3)
    yield name
    admin.delete_topics([name])[name].result(30)


def sync_until(cluster: Cluster, predicate, timeout: float = 30.0) -> None:
    """Sync every second, as beat would, until `predicate` holds."""

    def synced_and_true() -> bool:
        assert cluster_sync(cluster=cluster), cluster.last_sync_error
        return predicate()

    wait_until(synced_and_true, timeout, 1, what="the synced model")


def test_it_syncs_brokers_and_topics(kafka_cluster, live_topic):
    cluster = cluster_register(name="dev", bootstrap_servers=kafka_cluster.bootstrap_servers)

    sync_until(cluster, lambda: Partition.objects.filter(topic__name=live_topic).count() == 6)

    brokers = list(cluster.brokers.order_by("node_id").values_list("node_id", "rack", "alive"))
    assert brokers == [(1, "a", True), (2, "b", True), (3, "c", True)]
    for p in Partition.objects.filter(topic__name=live_topic):
        assert sorted(p.replicas) == [1, 2, 3]
        assert p.leader in p.replicas
        assert sorted(p.isr) == [1, 2, 3]
    cluster.refresh_from_db()
    assert cluster.kafka_cluster_id
    assert cluster.topics.get(name=live_topic).internal is False


def test_it_follows_a_broker_stop_and_start(kafka_cluster, live_topic, client, viewer):
    cluster = cluster_register(name="dev", bootstrap_servers=kafka_cluster.bootstrap_servers)
    sync_until(cluster, lambda: Partition.objects.filter(topic__name=live_topic).count() == 6)
    partitions = Partition.objects.filter(topic__name=live_topic)

    kafka_cluster.stop_broker(2)
    try:
        sync_until(
            cluster,
            lambda: (
                not cluster.brokers.get(node_id=2).alive
                and all(2 not in p.isr and p.leader != 2 for p in partitions.all())
            ),
        )
        assert all(p.under_replicated for p in partitions.all())
        # The page shows it too.
        client.force_login(viewer)
        page = client.get(f"/clusters/{cluster.name}/").content.decode()
        assert 'data-broker="2" data-alive="false"' in page
    finally:
        kafka_cluster.start_broker(2)

    sync_until(
        cluster,
        lambda: (
            cluster.brokers.get(node_id=2).alive
            and all(sorted(p.isr) == [1, 2, 3] for p in partitions.all())
        ),
        timeout=60,
    )


def test_it_records_an_unreachable_cluster_and_keeps_syncing_the_others(kafka_cluster, settings):
    settings.KAFKA_REQUEST_TIMEOUT = 2.0
    good = cluster_register(name="dev", bootstrap_servers=kafka_cluster.bootstrap_servers)
    bad = cluster_register(name="gone", bootstrap_servers="127.0.0.1:1")

    assert cluster_sync(cluster=bad) is SyncOutcome.FAILED
    assert cluster_sync(cluster=good) is SyncOutcome.SYNCED

    bad.refresh_from_db()
    good.refresh_from_db()
    assert "unreachable" in bad.last_sync_error
    assert good.last_sync_error == "" and good.brokers.filter(alive=True).count() == 3
