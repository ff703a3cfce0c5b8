"""Sync and the kafka-python admin APIs on the secured dev cluster, as the balancer."""

import uuid

import pytest
from devkit import live

from apps.clusters.models import ClusterRound, Partition, Topic
from apps.clusters.services import cluster_sync
from apps.kafka_layer import kafka_python_adapter
from apps.plans.kafka_ops import LiveKafka

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


def test_it_syncs_and_lists_reassignments_and_log_dirs(secure_cluster, secured, super_admin):
    topic = f"it-secure-{uuid.uuid4().hex[:8]}"
    config = secure_cluster.admin_config()
    live.topic_create(super_admin, topic, partitions=2, rf=2, config=config)
    try:
        assert cluster_sync(cluster=secured), secured.last_sync_error
        assert Partition.objects.filter(topic__name=topic).count() == 2
        assert set(secured.brokers.values_list("node_id", flat=True)) == {1, 2, 3}
        secured.refresh_from_db()
        assert secured.access_warning == ""
        # Each broker's log dir, and the dir of every replica of the topic, read too.
        for log_dirs in secured.brokers.values_list("log_dirs", flat=True):
            assert [d["online"] for d in log_dirs] == [True]
        row = Topic.objects.get(cluster=secured, name=topic)
        assert row.replica_dirs is not None and set(bytes(row.replica_dirs)) == {0}
        degraded = ClusterRound.objects.get(cluster=secured, kind=ClusterRound.SYNC)
        assert degraded.last_degraded == ""

        in_flight = kafka_python_adapter.reassignments_list(
            connection=secured.connection, partitions=[(topic, 0), (topic, 1)]
        )
        assert in_flight == {}
        sizes = LiveKafka(connection=secured.connection).replica_sizes()
        assert {(t, p) for t, p, _broker in sizes if t == topic} == {(topic, 0), (topic, 1)}
    finally:
        super_admin.delete_topics([topic])[topic].result(30)
