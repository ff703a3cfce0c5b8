"""The typed snapshot the apps hand to the engine parses to the same arrays as its JSON,
and is checked the same way."""

import numpy as np
import pytest

from apps.balancer.engine import (
    ClusterSnapshot,
    SnapshotBroker,
    SnapshotError,
    SnapshotPartition,
    SnapshotWindow,
    parse_snapshot,
)


def _typed(**changes) -> ClusterSnapshot:
    partitions = [
        SnapshotPartition(topic="b", partition=1, replicas=[2, 1], leader=2),
        SnapshotPartition(
            topic="a", partition=0, replicas=[1, 3], leader=1, load={"bytes_in": 5.0, "size": 9}
        ),
        SnapshotPartition(topic="a", partition=1, replicas=[3, 2], leader=-1),
    ]
    snapshot = ClusterSnapshot(
        cluster="c",
        taken_at="2026-11-28T00:00:00Z",
        brokers=[
            SnapshotBroker(id=3, rack="c"),
            SnapshotBroker(id=1, rack="a", capacity={"disk": 100.0}),
            SnapshotBroker(id=2, rack="b", alive=False),
        ],
        partitions=partitions,
        window=SnapshotWindow(start="2026-11-27T23:55:00Z", end="2026-11-28T00:00:00Z"),
    )
    return snapshot.with_partitions(changes.get("partitions", partitions))


def test_it_parses_like_its_json() -> None:
    typed = _typed()

    a, b = parse_snapshot(typed), parse_snapshot(typed.as_json())

    for field in ("broker_ids", "alive", "topic", "partition", "replicas", "rf", "leader", "size"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert np.array_equal(a.capacity, b.capacity, equal_nan=True)
    assert (a.topics, a.racks, a.cluster) == (b.topics, b.racks, b.cluster)
    assert typed.as_json()["window"] == {"start": typed.window.start, "end": typed.window.end}


@pytest.mark.parametrize(
    ("partition", "says"),
    [
        (SnapshotPartition(topic="x", partition=0, replicas=[1, 9]), "unknown broker"),
        (SnapshotPartition(topic="x", partition=0, replicas=[1, 1]), "not distinct"),
        (SnapshotPartition(topic="x", partition=0, replicas=[1, 2], leader=3), "not one of"),
        (SnapshotPartition(topic="x", partition=0, replicas=[]), "needs"),
        (
            SnapshotPartition(topic="x", partition=0, replicas=[1], load={"size": -1.0}),
            "load.size",
        ),
    ],
)
def test_it_refuses_what_a_type_cannot_say(partition, says) -> None:
    with pytest.raises(SnapshotError, match=says):
        parse_snapshot(_typed(partitions=[partition]))
