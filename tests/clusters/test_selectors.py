"""Reads of the cluster model: which clusters a user sees, partitions by filter."""

from collections import Counter

import pytest
from django.utils import timezone

from apps.clusters.models import Cluster, Partition
from apps.clusters.selectors import (
    broker_rows_list,
    cluster_visible_get,
    clusters_visible_list,
    partitions_filter,
    topic_rows_page,
)
from apps.clusters.services import cluster_state_apply
from apps.kafka_layer.cluster_state import BrokerState, ClusterState, PartitionState, TopicState

pytestmark = pytest.mark.django_db


def test_it_shows_clusters_only_to_role_holders(cluster, viewer, nobody, django_user_model):
    assert list(clusters_visible_list(user=viewer)) == [cluster]
    assert cluster_visible_get(user=viewer, name="prod") == cluster
    assert list(clusters_visible_list(user=nobody)) == []
    assert cluster_visible_get(user=nobody, name="prod") is None
    viewer.is_active = False
    assert list(clusters_visible_list(user=viewer)) == []


def test_it_filters_partitions_by_topic_and_broker(cluster):
    on_3 = partitions_filter(cluster=cluster, broker=3)
    assert [(p.topic.name, p.index) for p in on_3] == [("audit-log", 0), ("audit-log", 1)]
    orders_on_1 = partitions_filter(cluster=cluster, topic="orders", broker=1)
    assert orders_on_1.count() == 6
    assert partitions_filter(cluster=cluster, topic="orders", broker=3).count() == 0


def test_it_lists_replicas_and_leaders_per_broker_as_the_sync_counted_them(cluster):
    replicas, leaders = Counter(), Counter()
    for leader, replica_list in Partition.objects.values_list("leader", "replicas"):
        replicas.update(replica_list)
        leaders[leader] += 1

    rows = {r.broker.node_id: r for r in broker_rows_list(cluster=cluster)}

    assert {b: r.replicas for b, r in rows.items()} == {b: replicas[b] for b in (1, 2, 3)}
    assert {b: r.leaders for b, r in rows.items()} == {b: leaders[b] for b in (1, 2, 3)}
    assert sum(r.replicas for r in rows.values()) > 0


def test_it_pages_topics_with_problems_first_then_the_largest():
    def partition(t: int, i: int) -> PartitionState:
        if t == 0:  # under-replicated
            return PartitionState(index=i, leader=1, replicas=[1, 2], isr=[1])
        if t == 5 and i == 0:  # offline
            return PartitionState(index=i, leader=None, replicas=[1, 2], isr=[])
        return PartitionState(index=i, leader=1, replicas=[1, 2], isr=[1, 2])

    cluster = Cluster.objects.create(name="many", bootstrap_servers="127.0.0.1:1")
    topics = [
        TopicState(
            name=f"t{t:02d}", internal=False, partitions=[partition(t, i) for i in range(1 + t % 4)]
        )
        for t in range(12)
    ]
    brokers = [BrokerState(node_id=b, host="h", port=1, rack=None) for b in (1, 2)]
    cluster_state_apply(
        cluster=cluster,
        state=ClusterState(cluster_id="x", controller_id=1, brokers=brokers, topics=topics),
        now=timezone.now(),
    )

    first = topic_rows_page(cluster=cluster, size=5)

    assert [r.topic.name for r in first] == ["t05", "t00", "t03", "t07", "t11"]
    assert (first[0].offline, first[1].under_replicated) == (1, 1)
    assert (first[2].partitions, first[2].replication_factor) == (4, 2)
    assert first.paginator.count == 12 and first.paginator.num_pages == 3
    last = topic_rows_page(cluster=cluster, size=5, page=3)
    assert [r.topic.name for r in last] == ["t04", "t08"]
    found = topic_rows_page(cluster=cluster, search="T1")
    assert [r.topic.name for r in found] == ["t11", "t10"]
