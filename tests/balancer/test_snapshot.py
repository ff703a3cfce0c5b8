"""Snapshot parsing and validation (BALANCING.md §1)."""

from __future__ import annotations

import numpy as np
import pytest

from apps.balancer.engine import SnapshotError, parse_snapshot
from tests.support.factories import broker, part, snapshot


def good() -> dict:
    return snapshot(
        [broker(3, "b"), broker(1, "a", network_in=100.0), broker(2, None, alive=False)],
        [
            part("orders", 1, [1, 3], bytes_in=5.0, size=10),
            part("audit", 0, [3, 2, 1], bytes_out=2.0),
            part("orders", 0, [2, 1], leader=1),
        ],
    )


def test_it_parses_into_sorted_arrays() -> None:
    s = parse_snapshot(good())
    assert s.broker_ids.tolist() == [1, 2, 3]
    assert s.racks == ["a", None, "b"]
    assert s.alive.tolist() == [True, False, True]
    assert s.topics == ["audit", "orders"]
    assert [s.partition_name(p) for p in range(3)] == ["audit-0", "orders-0", "orders-1"]
    assert s.replicas.tolist() == [[2, 1, 0], [1, 0, -1], [0, 2, -1]]
    assert s.rf.tolist() == [3, 2, 2]
    assert s.leader.tolist() == [2, 0, 0]
    assert s.bytes_in.tolist() == [0.0, 0.0, 5.0]
    assert s.capacity[0, 0] == 100.0
    assert np.isnan(s.capacity[1:, 0]).all()  # not given: unbounded


def test_it_treats_missing_load_capacity_and_alive_as_defaults() -> None:
    s = parse_snapshot(
        {"brokers": [{"id": 1}], "partitions": [{"topic": "t", "partition": 0, "replicas": [1]}]}
    )
    assert s.alive.tolist() == [True]
    assert s.size.tolist() == [0.0]
    assert s.leader.tolist() == [-1]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda d: d["partitions"][0].update(replicas=[1, 7]),
            "partition orders-1: replica 7 is not a known broker",
        ),
        (lambda d: d["partitions"][0].update(replicas=[1, 1]), "are not distinct"),
        (lambda d: d["partitions"][0].update(replicas=[]), "non-empty list"),
        (lambda d: d["partitions"][0].update(replicas=["1"]), "is not a broker id"),
        (lambda d: d["partitions"][0].update(leader=2), "leader 2 is not one of its replicas"),
        (lambda d: d["partitions"][0].update(partition=-1), "integer from 0"),
        (lambda d: d["partitions"][0].update(topic=""), "non-empty string"),
        (lambda d: d["partitions"][0]["load"].update(bytes_in=-1), "finite number >= 0"),
        (lambda d: d["partitions"][0]["load"].update(size="big"), "must be a number"),
        (lambda d: d["partitions"].append(part("orders", 1, [1])), "orders-1 is listed twice"),
        (lambda d: d["brokers"].append(broker(1)), "broker 1 is listed twice"),
        (lambda d: d["brokers"][0].update(id="x"), "'id' must be an integer"),
        (lambda d: d["brokers"][0].update(id=-1), "'id' must be an integer from 0"),
        (lambda d: d["brokers"][0].update(alive="yes"), "'alive' must be true or false"),
        (lambda d: d["brokers"][0].update(rack=5), "'rack' must be a string or null"),
        (lambda d: d["brokers"][0].update(capacity={"disk": float("inf")}), "finite"),
        (lambda d: d.update(brokers=[]), "snapshot has no brokers"),
        (lambda d: d.update(partitions={}), "'partitions' must be a list"),
    ],
)
def test_it_rejects_malformed_snapshots_with_one_clear_line(mutate, message) -> None:
    data = good()
    mutate(data)
    with pytest.raises(SnapshotError) as err:
        parse_snapshot(data)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_it_rejects_a_non_object() -> None:
    with pytest.raises(SnapshotError, match="must be a JSON object"):
        parse_snapshot([1, 2])
