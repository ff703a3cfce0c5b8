"""PLAINTEXT through the connection settings, end to end on the real dev cluster."""

import uuid

import pytest
from devkit import live

from apps.clusters.models import Cluster, Partition
from apps.clusters.services import cluster_sync
from apps.kafka_layer import kafka_python_adapter
from apps.kafka_layer.clients import admin_client_create
from apps.plans.kafka_ops import LiveKafka

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


def test_it_syncs_and_uses_the_kafka_python_admin_apis_through_the_settings(kafka_cluster):
    cluster = Cluster(name="dev", bootstrap_servers=kafka_cluster.bootstrap_servers)
    cluster.full_clean()
    cluster.save()
    admin = admin_client_create(connection=cluster.connection)
    topic = f"it-conn-{uuid.uuid4().hex[:8]}"
    live.topic_create(admin, topic, partitions=2, rf=2)
    try:
        assert cluster_sync(cluster=cluster), cluster.last_sync_error
        assert Partition.objects.filter(topic__name=topic).count() == 2
        cluster.refresh_from_db()
        assert cluster.access_warning == ""  # no authorizer: every operation is allowed

        in_flight = kafka_python_adapter.reassignments_list(
            connection=cluster.connection, partitions=[(topic, 0), (topic, 1)]
        )
        assert in_flight == {}
        sizes = LiveKafka(connection=cluster.connection).replica_sizes()
        assert {(t, p) for t, p, _broker in sizes if t == topic} == {(topic, 0), (topic, 1)}
    finally:
        admin.delete_topics([topic])[topic].result(30)
