"""A topic's packed placement: what the sync writes on the topic row, and what the
snapshot and the sync's diff read back instead of partition rows."""

import importlib

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.clusters.models import Partition, Topic
from apps.clusters.placement import placement_diff, placement_pack, placement_unpack
from apps.clusters.services import cluster_state_apply
from apps.kafka_layer.cluster_state import PartitionState
from apps.metrics.selectors import cluster_snapshot_build
from tests.clusters.test_sync import orders, state


def test_it_unpacks_what_it_packed_sorted_by_index():
    partitions = [
        PartitionState(index=2, leader=None, replicas=[3, 1, 2], isr=[]),
        PartitionState(index=0, leader=70_000, replicas=[70_000], isr=[70_000]),
        PartitionState(index=1, leader=2, replicas=[2, 3], isr=[3]),
    ]

    unpacked = list(placement_unpack(packed=placement_pack(partitions=partitions)))

    assert unpacked == [
        (0, 70_000, [70_000], [70_000]),
        (1, 2, [2, 3], [3]),
        (2, None, [3, 1, 2], []),
    ]
    assert list(placement_unpack(packed=b"")) == []


def test_it_diffs_two_packed_placements_record_by_record():
    stored = [
        PartitionState(index=0, leader=1, replicas=[1, 2], isr=[1, 2]),
        PartitionState(index=1, leader=2, replicas=[2, 3], isr=[2, 3]),
        PartitionState(index=2, leader=3, replicas=[3, 1], isr=[3, 1]),
        PartitionState(index=4, leader=1, replicas=[1, 3], isr=[1, 3]),
    ]
    now = [
        stored[0],  # unchanged, after it a record one int shorter in the ISR
        PartitionState(index=1, leader=2, replicas=[2, 3], isr=[2]),
        PartitionState(index=3, leader=None, replicas=[1, 2, 3], isr=[]),  # new
        PartitionState(index=4, leader=3, replicas=[1, 3], isr=[1, 3]),  # leader moved
        PartitionState(index=5, leader=1, replicas=[1], isr=[1]),  # new, at the end
    ]  # index 2 is gone

    diff = placement_diff(
        stored=placement_pack(partitions=stored), packed=placement_pack(partitions=now)
    )

    assert diff == ([1, 4], [3, 5], [2])
    same = placement_pack(partitions=now)
    assert placement_diff(stored=same, packed=same) == ([], [], [])
    assert placement_diff(stored=b"", packed=same).added == [0, 1, 3, 4, 5]
    assert placement_diff(stored=same, packed=b"").removed == [0, 1, 3, 4, 5]


@pytest.mark.django_db
def test_it_follows_a_grown_topic_and_a_shrunk_isr_from_the_packed_placement(empty_cluster):
    cluster_state_apply(cluster=empty_cluster, state=state(), now=timezone.now())
    grown = state(
        topics=orders(
            PartitionState(index=0, leader=1, replicas=[1, 2], isr=[1]),
            PartitionState(index=1, leader=2, replicas=[2, 3], isr=[2, 3]),
            PartitionState(index=2, leader=3, replicas=[3, 1], isr=[3, 1]),
        )
    )

    cluster_state_apply(cluster=empty_cluster, state=grown, now=timezone.now())

    rows = Partition.objects.filter(topic__name="orders").order_by("index")
    assert [(p.index, p.leader, p.isr, p.under_replicated) for p in rows] == [
        (0, 1, [1], True),
        (1, 2, [2, 3], False),
        (2, 3, [3, 1], False),
    ]
    packed = Topic.objects.get(name="orders").placement
    assert placement_diff(
        stored=packed, packed=placement_pack(partitions=grown.topics[0].partitions)
    ) == ([], [], [])


@pytest.mark.django_db
def test_it_diffs_a_moved_leader_against_the_packed_placement_without_reading_partitions(
    empty_cluster,
):
    cluster_state_apply(cluster=empty_cluster, state=state(), now=timezone.now())
    moved = state(
        topics=orders(
            PartitionState(index=0, leader=2, replicas=[1, 2], isr=[1, 2]),
            PartitionState(index=1, leader=2, replicas=[2, 3], isr=[2, 3]),
        )
    )
    with CaptureQueriesContext(connection) as queries:
        cluster_state_apply(cluster=empty_cluster, state=moved, now=timezone.now())

    table = Partition._meta.db_table
    reads = [q["sql"] for q in queries if q["sql"].startswith("SELECT") and table in q["sql"]]
    assert reads == []

    assert sorted(Partition.objects.values_list("index", "leader")) == [(0, 2), (1, 2)]
    topic = Topic.objects.get(name="orders")
    assert [(i, leader) for i, leader, _, _ in placement_unpack(packed=topic.placement)] == [
        (0, 2),
        (1, 2),
    ]
    snapshot = cluster_snapshot_build(cluster=empty_cluster)
    assert [(p.partition, p.leader) for p in snapshot.partitions] == [(0, 2), (1, 2)]


@pytest.mark.django_db
def test_it_reads_partition_rows_for_a_topic_no_digest_vouches_for(empty_cluster):
    cluster_state_apply(cluster=empty_cluster, state=state(), now=timezone.now())
    # Another writer changed a partition and emptied the digest, as it must.
    Partition.objects.filter(index=0).update(leader=2)
    Topic.objects.update(placement_digest="")

    snapshot = cluster_snapshot_build(cluster=empty_cluster)

    assert [(p.partition, p.leader) for p in snapshot.partitions] == [(0, 2), (1, 2)]


@pytest.mark.django_db
def test_it_migrates_the_partition_rows_of_a_synced_topic_into_its_packed_placement(empty_cluster):
    from django.apps import apps

    migration = importlib.import_module("apps.clusters.migrations.0006_topic_packed_placement")
    cluster_state_apply(cluster=empty_cluster, state=state(), now=timezone.now())
    synced = Topic.objects.get(name="orders")
    empty = Topic.objects.create(cluster=empty_cluster, name="empty")
    # As before the migration: rows only.
    Topic.objects.update(placement=b"", placement_digest="")

    migration.placement_fill(apps, None)

    orders = Topic.objects.get(pk=synced.pk)
    assert (bytes(orders.placement), orders.placement_digest) == (
        bytes(synced.placement),
        synced.placement_digest,
    )
    empty.refresh_from_db()
    assert bytes(empty.placement) == b"" and empty.placement_digest
