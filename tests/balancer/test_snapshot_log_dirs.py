"""Disks inside brokers (JBOD) in the snapshot (BALANCING.md §1): the optional broker and
partition `log_dirs`, validated and kept as arrays; a snapshot without them is one disk
per broker."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from apps.balancer.engine import SnapshotError, parse_snapshot
from apps.balancer.engine.snapshot_input import (
    ClusterSnapshot,
    SnapshotBroker,
    SnapshotPartition,
)

TB = 10**12


def jbod() -> dict:
    return {
        "brokers": [
            {
                "id": 2,
                "log_dirs": [
                    {"path": "/d/a", "total": 2 * TB, "usable": TB, "online": True},
                    {"path": "/d/b", "total": TB, "usable": None, "online": False},
                    {"path": "/d/c"},
                ],
            },
            {"id": 1, "log_dirs": [{"path": "/d/x", "total": TB, "usable": TB, "online": True}]},
            {"id": 3},  # lists none
        ],
        "partitions": [
            {"topic": "t", "partition": 1, "replicas": [2, 1], "log_dirs": ["/d/c", "/d/x"]},
            {"topic": "t", "partition": 0, "replicas": [1, 2, 3], "log_dirs": ["/d/x", None, None]},
            {"topic": "s", "partition": 0, "replicas": [3]},
        ],
    }


def test_it_keeps_each_brokers_disks_and_each_replicas_disk() -> None:
    s = parse_snapshot(jbod())

    assert s.log_dirs == [["/d/x"], ["/d/a", "/d/b", "/d/c"], []]
    assert s.log_dir_total.shape == (3, 3)
    assert s.log_dir_total[1, :2].tolist() == [2 * TB, TB]
    assert np.isnan(s.log_dir_total[1, 2]) and np.isnan(s.log_dir_usable[1, 1])
    assert np.isnan(s.log_dir_total[0, 1:]).all() and np.isnan(s.log_dir_total[2]).all()
    assert s.log_dir_online.tolist() == [
        [True, False, False],
        [True, False, True],  # online unless it says otherwise
        [False, False, False],
    ]
    # Partitions sorted (s-0, t-0, t-1); dirs aligned with the replica matrix.
    assert s.replicas.tolist() == [[2, -1, -1], [0, 1, 2], [1, 0, -1]]
    assert s.replica_dir.tolist() == [[-1, -1, -1], [0, -1, -1], [2, 0, -1]]


def test_it_reads_the_typed_snapshot_the_apps_build_the_same() -> None:
    typed = ClusterSnapshot(
        cluster="c",
        taken_at="2026-01-01T00:00:00Z",
        brokers=[SnapshotBroker(id=b["id"], log_dirs=b.get("log_dirs")) for b in jbod()["brokers"]],
        partitions=[
            SnapshotPartition(
                topic=p["topic"],
                partition=p["partition"],
                replicas=p["replicas"],
                log_dirs=p.get("log_dirs"),
            )
            for p in jbod()["partitions"]
        ],
    )

    s = parse_snapshot(typed)

    assert s.replica_dir.tolist() == [[-1, -1, -1], [0, -1, -1], [2, 0, -1]]
    assert parse_snapshot(typed.as_json()).log_dirs == s.log_dirs


def test_it_loads_a_snapshot_without_disks_as_before() -> None:
    plain = {
        "brokers": [{"id": 1}],
        "partitions": [{"topic": "t", "partition": 0, "replicas": [1]}],
    }

    s = parse_snapshot(plain)

    assert s.log_dirs is None and s.log_dir_total is None and s.replica_dir is None


def _broken(change) -> dict:
    data = copy.deepcopy(jbod())
    change(data)
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["brokers"][0].update(log_dirs="/d/a"), "broker 2: 'log_dirs' must be a list"),
        (
            lambda d: d["brokers"][0]["log_dirs"].append("/d/z"),
            r"broker 2: log_dirs\[3\] must be an object",
        ),
        (
            lambda d: d["brokers"][0]["log_dirs"].append({"path": ""}),
            r"broker 2: log_dirs\[3\]: 'path' must be a non-empty string",
        ),
        (
            lambda d: d["brokers"][0]["log_dirs"].append({"path": "/d/a"}),
            "broker 2: log dir '/d/a' is listed twice",
        ),
        (
            lambda d: d["brokers"][1]["log_dirs"][0].update(total=-1),
            r"broker 1: log_dirs\[0\]: total must be a finite number >= 0",
        ),
        (
            lambda d: d["brokers"][1]["log_dirs"][0].update(usable=2 * TB),
            r"broker 1: log_dirs\[0\]: usable 2000000000000 is more than total",
        ),
        (
            lambda d: d["brokers"][1]["log_dirs"][0].update(online="yes"),
            r"broker 1: log_dirs\[0\]: 'online' must be true or false",
        ),
        (
            lambda d: d["partitions"][0].update(log_dirs=["/d/c"]),
            r"partition t-1: 'log_dirs' must be a list aligned with replicas \[2, 1\]",
        ),
        (
            lambda d: d["partitions"][0].update(log_dirs=["/d/x", "/d/x"]),
            "partition t-1: log dir '/d/x' is not one that broker 2 lists",
        ),
        (
            lambda d: d["partitions"][1].update(log_dirs=["/d/x", None, "/d/a"]),
            "partition t-0: log dir '/d/a' is not one that broker 3 lists",
        ),
        (
            lambda d: d["partitions"][0].update(log_dirs=[1, None]),
            "partition t-1: log dir 1 is not one that broker 2 lists",
        ),
    ],
)
def test_it_refuses_malformed_disks_with_a_clear_error(change, message) -> None:
    with pytest.raises(SnapshotError, match=message):
        parse_snapshot(_broken(change))
