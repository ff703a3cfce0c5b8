"""Partition rows stored before metrics.0007 are packed onto their topic rows: none is
lost, a window without a topic row gets one, and old broker rows get messages in."""

from datetime import UTC, datetime, timedelta

import pytest

from apps.metrics.window_packing import brokers_unpack, loads_unpack
from tests.support.migrations import migrated_apps, migrated_back_to

BEFORE = [("metrics", "0006_window_loads_cluster_without_fk_constraint")]
AFTER = [("metrics", "0007_partition_loads_packed_on_topic_loads")]
START = datetime(2026, 11, 1, 4, 0, tzinfo=UTC)
END = START + timedelta(minutes=1)


@pytest.fixture
def executor(transactional_db, django_db_serialized_rollback):
    yield from migrated_back_to(BEFORE)


def test_it_packs_every_partition_row_onto_its_topic_row(executor):
    apps = executor.loader.project_state(BEFORE).apps
    cluster = apps.get_model("clusters", "Cluster").objects.create(
        name="old", bootstrap_servers="127.0.0.1:1"
    )
    PartitionLoad = apps.get_model("metrics", "PartitionLoad")
    window = {"cluster_id": cluster.pk, "window_start": START, "window_end": END}
    for partition, leader, bytes_in in ((0, 1, 10.0), (1, 2, None)):
        PartitionLoad.objects.create(
            **window,
            topic="orders",
            partition=partition,
            samples=6,
            leader=leader,
            replicas=[leader, 3],
            messages_in=None if bytes_in is None else 2.0,
            bytes_in=bytes_in,
            bytes_out=4.0,
            size=100,
        )
    # "orders" had its topic row (as stored); "billing" none (stored by a test, say).
    apps.get_model("metrics", "TopicLoad").objects.create(
        **window,
        topic="orders",
        network_in=20.0,
        network_out=18.0,
        brokers_in={"1": 10.0, "3": 10.0},
        brokers_out={"1": 14.0},
    )
    PartitionLoad.objects.create(
        **window, topic="billing", partition=0, samples=3, leader=3, replicas=[3], bytes_in=5.0
    )
    apps.get_model("metrics", "BrokerLoad").objects.create(
        **window, broker_id=1, network_in=0, network_out=0, disk=0, replicas=1, leaders=1
    )

    apps = migrated_apps(AFTER)
    topics = {t.topic: t for t in apps.get_model("metrics", "TopicLoad").objects.all()}
    orders, billing = topics["orders"], topics["billing"]
    assert orders.partition_count == 2 and billing.partition_count == 1
    assert loads_unpack(packed=orders.partitions) == [
        (0, 6, 1, [1, 3], 2.0, 10.0, 4.0, 100, None, 0),
        (1, 6, 2, [2, 3], None, None, 4.0, 100, None, 0),
    ]
    assert brokers_unpack(packed=orders.brokers) == ({1: 10.0, 3: 10.0}, {1: 14.0, 3: 0.0})
    assert (billing.network_in, billing.network_out) == (5.0, 0.0)
    assert brokers_unpack(packed=billing.brokers) == ({3: 5.0}, {3: 0.0})
    assert billing.window_end == END
    broker = apps.get_model("metrics", "BrokerLoad").objects.get()
    assert broker.messages_in == 2.0  # it led partition 0 of orders
