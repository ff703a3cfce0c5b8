"""The canary on the real dev cluster: a partition led by each broker, every record
written with acks=all acknowledged and read back, per broker latencies stored, and the
canary topic left out of what the balancer may move."""

from __future__ import annotations

import uuid

import pytest
from devkit.live import FRESH_METADATA
from devkit.polling import wait_until

from apps.canary.models import CanaryWindow
from apps.canary.probes import canary_probe_drop
from apps.clusters.models import Cluster
from apps.clusters.services import cluster_sync
from apps.kafka_layer.clients import admin_client_create
from apps.plans.selectors.snapshot import snapshot_build
from apps.plans.services import policy_get
from tests.support.canary import canary_all_measured

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


@pytest.fixture
def canary_topic(settings, kafka_cluster):
    settings.CANARY_TOPIC = f"it-canary-{uuid.uuid4().hex[:8]}"
    settings.CANARY_RECORDS = 5
    admin = admin_client_create(bootstrap_servers=kafka_cluster.bootstrap_servers)
    yield settings.CANARY_TOPIC
    if settings.CANARY_TOPIC in admin.list_topics(timeout=10).topics:
        admin.delete_topics([settings.CANARY_TOPIC])[settings.CANARY_TOPIC].result(30)


def test_it_measures_each_broker_through_a_partition_it_leads(kafka_cluster, canary_topic):
    cluster = Cluster.objects.create(
        name="canary", bootstrap_servers=kafka_cluster.bootstrap_servers
    )
    assert cluster_sync(cluster=cluster), cluster.last_sync_error
    try:
        windows = wait_until(
            lambda: canary_all_measured(cluster), timeout=60, what="a round measuring every broker"
        )
    finally:
        canary_probe_drop(cluster=cluster)

    assert sorted(w.broker_id for w in windows) == [1, 2, 3]
    assert all(w.sent == 5 for w in windows)  # CANARY_RECORDS
    for w in windows:
        assert 0 < w.produce_p50_ms <= w.produce_p99_ms
        assert 0 < w.end_to_end_p50_ms <= w.end_to_end_p99_ms
    assert CanaryWindow.objects.filter(cluster=cluster, at=windows[0].at).count() == 3
    admin = admin_client_create(
        bootstrap_servers=kafka_cluster.bootstrap_servers, extra=FRESH_METADATA
    )
    meta = admin.list_topics(topic=canary_topic, timeout=10).topics[canary_topic]
    assert sorted(p.leader for p in meta.partitions.values()) == [1, 2, 3]
    assert all(len(p.replicas) == 2 for p in meta.partitions.values())

    assert cluster_sync(cluster=cluster)
    policy = policy_get(cluster=cluster)
    scoped = snapshot_build(cluster=cluster, policy=policy).snapshot
    assert not [p for p in scoped.partitions if p.topic == canary_topic]
    draining = snapshot_build(cluster=cluster, policy=policy, draining=True).snapshot
    assert len([p for p in draining.partitions if p.topic == canary_topic]) == 3
