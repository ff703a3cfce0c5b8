"""Hand-made cluster state and measured windows for the metrics tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from devkit.partition_loads import partition_load_write
from django.utils import timezone

from apps.clusters.models import Broker, Cluster, Partition, Topic

T0 = datetime(2026, 11, 22, 4, 0, tzinfo=UTC)


def cluster_create(*, name: str = "demo", bootstrap_servers: str = "127.0.0.1:1") -> Cluster:
    cluster = Cluster.objects.create(name=name, bootstrap_servers=bootstrap_servers)
    now = timezone.now()
    Broker.objects.create(
        cluster=cluster,
        node_id=1,
        rack="a",
        first_seen=now,
        last_seen=now,
        capacity_network_in=125_000_000,
        capacity_network_out=125_000_000,
        capacity_disk=500_000_000_000,
    )
    Broker.objects.create(
        cluster=cluster,
        node_id=2,
        rack="b",
        first_seen=now,
        last_seen=now,
        capacity_disk=250_000_000_000,
    )
    Broker.objects.create(cluster=cluster, node_id=3, rack=None, alive=False, first_seen=now)
    orders = Topic.objects.create(cluster=cluster, name="orders")
    Partition.objects.create(topic=orders, index=0, leader=1, replicas=[1, 2, 3], isr=[1, 2])
    Partition.objects.create(
        topic=orders, index=1, leader=None, replicas=[3, 1], isr=[], offline=True
    )
    billing = Topic.objects.create(cluster=cluster, name="billing")
    Partition.objects.create(topic=billing, index=0, leader=2, replicas=[2, 1], isr=[2, 1])
    return cluster


def partition_load_create(
    *, cluster: Cluster, topic: str, partition: int, window: int, **loads
) -> None:
    """One partition's load in window `window` (minutes after T0), stored packed."""
    partition_load_write(
        cluster=cluster,
        topic=topic,
        partition=partition,
        window_start=T0 + timedelta(minutes=window),
        **{"leader": 1, "replicas": [1, 2, 3], **loads},
    )
