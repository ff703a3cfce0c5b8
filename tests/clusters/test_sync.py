"""Sync service: model updates from a ClusterState, no Kafka needed."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.clusters.models import Broker, Cluster, Partition, Topic, TopicPlacement
from apps.clusters.services import cluster_state_apply, cluster_sync
from apps.clusters.sync_outcome import SyncOutcome
from apps.kafka_layer.cluster_state import BrokerState, ClusterState, PartitionState, TopicState

pytestmark = pytest.mark.django_db


def orders(*partitions: PartitionState) -> list[TopicState]:
    """The one topic "orders" with these partitions."""
    return [TopicState(name="orders", internal=False, partitions=list(partitions))]


def state(*, brokers=(1, 2, 3), topics=None) -> ClusterState:
    if topics is None:
        topics = orders(
            PartitionState(index=0, leader=1, replicas=[1, 2], isr=[1, 2]),
            PartitionState(index=1, leader=2, replicas=[2, 3], isr=[2, 3]),
        )
    return ClusterState(
        cluster_id="abc",
        controller_id=100,
        brokers=[
            BrokerState(node_id=b, host="127.0.0.1", port=9000 + b, rack="r") for b in brokers
        ],
        topics=topics,
    )


def test_it_creates_brokers_topics_and_partitions(empty_cluster):
    cluster_state_apply(cluster=empty_cluster, state=state(), now=timezone.now())

    assert list(empty_cluster.brokers.values_list("node_id", "alive")) == [
        (1, True),
        (2, True),
        (3, True),
    ]
    p1 = Partition.objects.get(topic__name="orders", index=1)
    assert (p1.leader, p1.replicas, p1.isr) == (2, [2, 3], [2, 3])
    assert not p1.offline and not p1.under_replicated
    empty_cluster.refresh_from_db()
    assert empty_cluster.kafka_cluster_id == "abc" and empty_cluster.controller_id == 100


def test_it_is_idempotent(empty_cluster):
    now = timezone.now()
    cluster_state_apply(cluster=empty_cluster, state=state(), now=now)
    cluster_state_apply(cluster=empty_cluster, state=state(), now=now)

    assert Broker.objects.count() == 3
    assert Topic.objects.count() == 1
    assert Partition.objects.count() == 2


def test_it_marks_a_vanished_broker_dead_and_keeps_its_last_seen(empty_cluster):
    seen = timezone.now()
    cluster_state_apply(cluster=empty_cluster, state=state(), now=seen)
    later = seen + timedelta(seconds=30)
    gone = state(
        brokers=(1, 3),
        topics=orders(
            PartitionState(index=0, leader=1, replicas=[1, 2], isr=[1]),
            PartitionState(index=1, leader=None, replicas=[2, 3], isr=[]),
        ),
    )
    cluster_state_apply(cluster=empty_cluster, state=gone, now=later)

    broker = empty_cluster.brokers.get(node_id=2)
    assert not broker.alive
    assert broker.last_seen == seen
    assert empty_cluster.brokers.get(node_id=1).last_seen == later
    p0 = Partition.objects.get(index=0)
    p1 = Partition.objects.get(index=1)
    assert p0.under_replicated and not p0.offline
    assert p1.offline and p1.leader is None

    cluster_state_apply(cluster=empty_cluster, state=state(), now=later + timedelta(seconds=5))
    assert empty_cluster.brokers.get(node_id=2).alive


def test_it_removes_deleted_topics(empty_cluster):
    cluster_state_apply(cluster=empty_cluster, state=state(), now=timezone.now())
    cluster_state_apply(cluster=empty_cluster, state=state(topics=[]), now=timezone.now())

    assert not Topic.objects.exists()
    assert not Partition.objects.exists()


def test_it_records_brokers_known_only_from_replica_lists(empty_cluster):
    topics = [
        TopicState(
            name="t",
            internal=False,
            partitions=[PartitionState(index=0, leader=1, replicas=[1, 7], isr=[1])],
        )
    ]
    cluster_state_apply(
        cluster=empty_cluster, state=state(brokers=(1,), topics=topics), now=timezone.now()
    )

    ghost = empty_cluster.brokers.get(node_id=7)
    assert not ghost.alive and ghost.last_seen is None


def test_it_keeps_the_last_state_when_the_cluster_is_unreachable(empty_cluster, settings):
    settings.KAFKA_REQUEST_TIMEOUT = 2.0
    cluster_state_apply(cluster=empty_cluster, state=state(), now=timezone.now())
    other = Cluster.objects.create(name="c2", bootstrap_servers="127.0.0.1:1")

    assert cluster_sync(cluster=empty_cluster) is SyncOutcome.FAILED

    empty_cluster.refresh_from_db()
    assert empty_cluster.last_sync_error.startswith("unreachable")
    assert empty_cluster.last_sync_error_at is not None
    assert empty_cluster.brokers.filter(alive=True).count() == 3
    assert Partition.objects.filter(topic__cluster=empty_cluster).count() == 2
    other.refresh_from_db()
    assert other.last_sync_error == ""


def test_it_keeps_a_topic_that_could_not_be_described_this_round(empty_cluster):
    cluster_state_apply(cluster=empty_cluster, state=state(), now=timezone.now())
    unsettled = ClusterState(
        cluster_id="abc",
        controller_id=100,
        brokers=state().brokers,
        topics=[],
        unsettled_topics=["orders"],
    )
    cluster_state_apply(cluster=empty_cluster, state=unsettled, now=timezone.now())

    assert Partition.objects.filter(topic__name="orders").count() == 2


def many_topics(count: int, *, moved: frozenset[str] = frozenset(), partitions: int = 3):
    """`count` topics; in those named in `moved` partition 0's leader is its second replica."""
    topics = []
    for t in range(count):
        name = f"t{t:03d}"
        parts = []
        for i in range(partitions):
            replicas = [1 + (t + i) % 3, 1 + (t + i + 1) % 3]
            leader = replicas[1] if name in moved and i == 0 else replicas[0]
            parts.append(PartitionState(index=i, leader=leader, replicas=replicas, isr=replicas))
        topics.append(TopicState(name=name, internal=False, partitions=parts))
    return topics


def test_it_writes_only_the_partitions_that_changed(empty_cluster):
    cluster_state_apply(
        cluster=empty_cluster, state=state(topics=many_topics(20)), now=timezone.now()
    )
    before = dict(Partition.objects.values_list("pk", "leader"))

    moved = frozenset({"t003", "t017"})
    cluster_state_apply(
        cluster=empty_cluster, state=state(topics=many_topics(20, moved=moved)), now=timezone.now()
    )

    after = dict(Partition.objects.values_list("pk", "leader"))
    assert after.keys() == before.keys()  # rows updated in place, none recreated
    changed = Partition.objects.filter(pk__in=[pk for pk in after if after[pk] != before[pk]])
    assert sorted(changed.values_list("topic__name", "index")) == [("t003", 0), ("t017", 0)]
    for p in changed:
        assert p.leader == p.replicas[1]


def test_it_reads_no_partition_of_an_unchanged_cluster_whatever_its_size(
    empty_cluster, django_assert_max_num_queries
):
    cluster_state_apply(
        cluster=empty_cluster, state=state(topics=many_topics(60)), now=timezone.now()
    )

    # Per-topic reads would take at least 60 queries.
    with django_assert_max_num_queries(12):
        cluster_state_apply(
            cluster=empty_cluster, state=state(topics=many_topics(60)), now=timezone.now()
        )
    with django_assert_max_num_queries(16):
        cluster_state_apply(
            cluster=empty_cluster,
            state=state(topics=many_topics(60, moved=frozenset({"t001", "t059"}))),
            now=timezone.now(),
        )
    assert Partition.objects.get(topic__name="t059", index=0).leader == 1 + 60 % 3


def test_it_follows_a_topic_recreated_with_fewer_partitions_and_a_new_flag(empty_cluster):
    cluster_state_apply(
        cluster=empty_cluster, state=state(topics=many_topics(2)), now=timezone.now()
    )
    recreated = many_topics(2, partitions=1)
    recreated[1] = TopicState(name="t001", internal=True, partitions=recreated[1].partitions)

    cluster_state_apply(cluster=empty_cluster, state=state(topics=recreated), now=timezone.now())

    assert sorted(Partition.objects.values_list("topic__name", "index")) == [
        ("t000", 0),
        ("t001", 0),
    ]
    assert list(Topic.objects.values_list("name", "internal")) == [
        ("t000", False),
        ("t001", True),
    ]


def test_it_rewrites_a_partition_row_changed_behind_its_back(empty_cluster):
    cluster_state_apply(cluster=empty_cluster, state=state(), now=timezone.now())
    Partition.objects.filter(index=0).update(leader=3)
    Topic.objects.update(placement_digest="")  # what any other writer must do

    cluster_state_apply(cluster=empty_cluster, state=state(), now=timezone.now())

    assert Partition.objects.get(index=0).leader == 1


def test_it_counts_each_brokers_replicas_and_leaders(empty_cluster):
    cluster_state_apply(cluster=empty_cluster, state=state(), now=timezone.now())
    counts = {
        b: (r, n)
        for b, r, n in Broker.objects.values_list("node_id", "replicas_count", "leaders_count")
    }
    assert counts == {1: (1, 1), 2: (2, 1), 3: (1, 0)}

    moved = state(
        topics=orders(
            PartitionState(index=0, leader=2, replicas=[1, 2], isr=[1, 2]),
            PartitionState(index=1, leader=2, replicas=[2, 3], isr=[2, 3]),
        )
    )
    cluster_state_apply(cluster=empty_cluster, state=moved, now=timezone.now())

    assert dict(Broker.objects.values_list("node_id", "leaders_count")) == {1: 0, 2: 2, 3: 0}


def test_it_counts_each_topics_partitions_and_their_problems(empty_cluster):
    cluster_state_apply(cluster=empty_cluster, state=state(), now=timezone.now())
    shrunk = state(
        topics=orders(
            PartitionState(index=0, leader=1, replicas=[1, 2], isr=[1]),
            PartitionState(index=1, leader=None, replicas=[2, 3], isr=[]),
            PartitionState(index=2, leader=3, replicas=[3, 1, 2], isr=[3, 1, 2]),
        )
    )
    cluster_state_apply(cluster=empty_cluster, state=shrunk, now=timezone.now())

    topic = Topic.objects.get(name="orders")
    assert (topic.partitions_count, topic.replication_factor) == (3, 3)
    assert (topic.offline_count, topic.under_replicated_count) == (1, 2)


def test_it_keeps_each_topics_counts_per_broker_rewriting_changed_topics_only():
    def state(orders_leader: int) -> ClusterState:
        return ClusterState(
            cluster_id="c",
            controller_id=1,
            brokers=[BrokerState(node_id=b, host="h", port=9000 + b, rack=None) for b in (1, 2, 3)],
            topics=[
                TopicState(
                    name="orders",
                    internal=False,
                    partitions=[
                        PartitionState(index=0, leader=orders_leader, replicas=[1, 2], isr=[1, 2]),
                        PartitionState(index=1, leader=2, replicas=[2, 3], isr=[2, 3]),
                    ],
                ),
                TopicState(
                    name="logs",
                    internal=False,
                    partitions=[PartitionState(index=0, leader=None, replicas=[3], isr=[])],
                ),
            ],
        )

    cluster = Cluster.objects.create(name="c", bootstrap_servers="h:1")
    cluster_state_apply(cluster=cluster, state=state(1), now=timezone.now())
    rows = {p.topic.name: p for p in TopicPlacement.objects.select_related("topic")}
    assert rows["orders"].replicas == {"1": 1, "2": 2, "3": 1}
    assert rows["orders"].leaders == {"1": 1, "2": 1}
    assert (rows["orders"].replicas_total, rows["orders"].leaders_total) == (4, 2)
    assert rows["logs"].leaders == {} and rows["logs"].replicas_total == 1  # offline

    logs_written = TopicPlacement.objects.get(topic__name="logs")
    TopicPlacement.objects.filter(pk=logs_written.pk).update(replicas={"9": 9})
    cluster_state_apply(cluster=cluster, state=state(2), now=timezone.now())
    assert TopicPlacement.objects.get(topic__name="orders").leaders == {"2": 2}
    # "logs" did not change: the sync did not write it again.
    assert TopicPlacement.objects.get(topic__name="logs").replicas == {"9": 9}


def test_it_writes_the_counts_of_every_changed_topic_in_one_statement(empty_cluster):
    # More topics than one bulk_create batch held (199 rows on SQLite, 500 elsewhere).
    cluster_state_apply(
        cluster=empty_cluster,
        state=state(topics=many_topics(510, partitions=1)),
        now=timezone.now(),
    )
    moved = frozenset(f"t{t:03d}" for t in range(510))

    with CaptureQueriesContext(connection) as queries:
        cluster_state_apply(
            cluster=empty_cluster,
            state=state(topics=many_topics(510, partitions=1, moved=moved)),
            now=timezone.now(),
        )

    table = TopicPlacement._meta.db_table
    # An executemany is logged once, as "510 times: INSERT ...".
    writes = [q for q in queries if "INSERT" in q["sql"] and table in q["sql"]]
    assert len(writes) == 1
    assert TopicPlacement.objects.count() == 510
    row = TopicPlacement.objects.get(topic__name="t001")
    assert row.leaders == {"3": 1} and row.replicas == {"2": 1, "3": 1}
