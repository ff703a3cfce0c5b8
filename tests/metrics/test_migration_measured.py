"""Broker rows stored before the `measured` flag get it from their window's partition
rows, as the traffic chart judged it (metrics.0005)."""

from datetime import UTC, datetime, timedelta

import pytest

from tests.support.migrations import migrated_apps, migrated_back_to

BEFORE = [("metrics", "0004_topic_loads_per_window")]
AFTER = [("metrics", "0005_broker_load_measured_flag")]


@pytest.fixture
def executor(transactional_db, django_db_serialized_rollback):
    yield from migrated_back_to(BEFORE)


def test_it_flags_the_stored_windows_nothing_was_measured_in(executor):
    apps = executor.loader.project_state(BEFORE).apps
    cluster = apps.get_model("clusters", "Cluster").objects.create(
        name="old", bootstrap_servers="127.0.0.1:1"
    )
    BrokerLoad = apps.get_model("metrics", "BrokerLoad")
    PartitionLoad = apps.get_model("metrics", "PartitionLoad")
    first = datetime(2026, 11, 1, 4, 0, tzinfo=UTC)
    # Minute 0: unmeasured (no rates); 1: measured; 2: its partition rows pruned.
    for minute, rates in ((0, [None, None]), (1, [None, 5.0]), (2, [])):
        start = first + timedelta(minutes=minute)
        for partition, bytes_in in enumerate(rates):
            PartitionLoad.objects.create(
                cluster_id=cluster.pk,
                topic="orders",
                partition=partition,
                window_start=start,
                window_end=start + timedelta(minutes=1),
                samples=6,
                bytes_in=bytes_in,
            )
        for broker in (1, 2):
            BrokerLoad.objects.create(
                cluster_id=cluster.pk,
                broker_id=broker,
                window_start=start,
                window_end=start + timedelta(minutes=1),
                network_in=0.0,
                network_out=0.0,
                disk=0,
                replicas=1,
                leaders=0,
            )

    apps = migrated_apps(AFTER)
    rows = apps.get_model("metrics", "BrokerLoad").objects.values_list(
        "window_start__minute", "broker_id", "measured"
    )
    assert sorted(rows) == [
        (0, 1, False),
        (0, 2, False),
        (1, 1, True),
        (1, 2, True),
        (2, 1, True),
        (2, 2, True),
    ]
