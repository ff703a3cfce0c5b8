"""The API's partition loads: read lazily from the packed topic rows, in the order and
with the fields the per-partition rows had."""

from datetime import timedelta

import pytest
from devkit.partition_loads import partition_loads_write

from apps.metrics.selectors import latest_window_start, loads_partition_filter
from tests.support.factories import T0, cluster_with_dead_broker_make

pytestmark = pytest.mark.django_db


@pytest.fixture
def cluster_with_loads():
    cluster = cluster_with_dead_broker_make()
    for minute in (0, 1):
        partition_loads_write(
            cluster=cluster,
            loads=[
                {
                    "topic": topic,
                    "partition": p,
                    "window_start": T0 + timedelta(minutes=minute),
                    "leader": 1,
                    "replicas": [1, 2],
                    "bytes_in": None if p else 10.0 * minute,
                }
                for topic, count in (("orders", 3), ("billing", 1))
                for p in range(count)
            ],
        )
    return cluster


def test_it_counts_and_orders_newest_window_first_then_topic_and_partition(cluster_with_loads):
    rows = loads_partition_filter(cluster=cluster_with_loads)
    assert len(rows) == rows.count() == 8
    assert [(r["window_start"].minute, r["topic"], r["partition"]) for r in rows[:]] == [
        (T0.minute + m, t, p)
        for m in (1, 0)
        for t, p in (("billing", 0), ("orders", 0), ("orders", 1), ("orders", 2))
    ]
    assert rows[0]["bytes_in"] == 10.0 and rows[2]["bytes_in"] is None
    assert rows[-1] == rows[7] and rows[-1]["replicas"] == [1, 2]
    with pytest.raises(IndexError):
        rows[8]


def test_it_slices_across_topic_rows_and_filters(cluster_with_loads):
    rows = loads_partition_filter(cluster=cluster_with_loads)
    assert rows[3:6] == rows[:][3:6]
    assert rows[6:100] == rows[:][6:]
    assert rows[9:12] == []
    orders = loads_partition_filter(
        cluster=cluster_with_loads, topic="orders", since=T0 + timedelta(minutes=1)
    )
    assert [(r["topic"], r["partition"]) for r in orders[:]] == [("orders", p) for p in range(3)]
    assert len(loads_partition_filter(cluster=cluster_with_loads, until=T0)) == 0


def test_it_reads_the_newest_window_start(cluster_with_loads):
    assert latest_window_start(cluster=cluster_with_loads) == T0 + timedelta(minutes=1)
