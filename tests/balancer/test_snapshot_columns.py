"""A snapshot's partitions read as columns give the arrays the per-partition loop gives,
and anything the loop refuses goes back to it (which names the problem)."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest

from apps.balancer.engine import snapshot as snapshot_module
from apps.balancer.engine.errors import SnapshotError
from apps.balancer.engine.snapshot_columns import partition_columns
from apps.balancer.engine.snapshot_input import ClusterSnapshot, SnapshotBroker, SnapshotPartition

FIELDS = ("topic", "partition", "replicas", "rf", "leader", "bytes_in", "bytes_out")
FIELDS += ("messages_in", "size", "replica_dir")


def _varied() -> dict:
    """Ragged replica lists, null and -1 leaders, loads null, partial, -0.0 and past
    int64, dirs listed, null or left out, brokers with and without dirs."""
    dirs = [{"path": "/d/a"}, {"path": "/d/b"}]
    return {
        "brokers": [{"id": 7, "log_dirs": dirs}, {"id": 2, "log_dirs": dirs[:1]}, {"id": 40}],
        "partitions": [
            {"topic": "t", "partition": 3, "replicas": [7, 2, 40], "leader": 2},
            {
                "topic": "s",
                "partition": 0,
                "replicas": [2],
                "leader": None,
                "load": {"bytes_in": -0.0, "size": 2**64 + 1},
                "log_dirs": ["/d/a"],
            },
            {
                "topic": "t",
                "partition": 1,
                "replicas": [40, 7],
                "leader": -1,
                "load": None,
                "log_dirs": [None, "/d/b"],
            },
            {
                "topic": "s",
                "partition": 1,
                "replicas": [7, 2],
                "leader": 7,
                "load": {"bytes_in": 1, "bytes_out": 2.5, "messages_in": 3, "size": 4.0},
            },
        ],
    }


def _by_loop(data, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(snapshot_module, "partition_columns", lambda *a, **k: None)
        return snapshot_module.parse_snapshot(data)


def _same(a, b) -> None:
    assert a.topics == b.topics
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert x.tobytes() == y.tobytes(), name  # -0.0 and NaN included


def _typed(data: dict) -> ClusterSnapshot:
    return ClusterSnapshot(
        cluster="c",
        taken_at="t",
        brokers=[SnapshotBroker(**b) for b in data["brokers"]],
        partitions=[
            SnapshotPartition(**{**p, "leader": p.get("leader") or -1}) for p in data["partitions"]
        ],
    )


@pytest.mark.parametrize("typed", [False, True])
def test_the_columns_equal_the_loops_arrays(typed, monkeypatch) -> None:
    data = _typed(_varied()) if typed else _varied()
    ids = np.array([2, 7, 40])
    index = [{"/d/a": 0}, {"/d/a": 0, "/d/b": 1}, None]
    parts = data.partitions if typed else data["partitions"]
    assert partition_columns(parts, ids, index, typed=typed) is not None
    _same(snapshot_module.parse_snapshot(data), _by_loop(data, monkeypatch))


@pytest.mark.parametrize("typed", [False, True])
def test_the_columns_equal_the_loops_arrays_when_every_partition_lists_dirs(
    typed, monkeypatch
) -> None:
    data = _varied()
    data["brokers"][2]["log_dirs"] = [{"path": "/d/c"}]
    paths = {
        ("t", 3): ["/d/b", "/d/a", "/d/c"],
        ("s", 0): ["/d/a"],
        ("t", 1): [None, "/d/b"],
        ("s", 1): ["/d/a", "/d/a"],
    }
    for p in data["partitions"]:
        p["log_dirs"] = paths[p["topic"], p["partition"]]
    data = _typed(data) if typed else data
    ids = np.array([2, 7, 40])
    index = [{"/d/a": 0}, {"/d/a": 0, "/d/b": 1}, {"/d/c": 0}]
    parts = data.partitions if typed else data["partitions"]
    assert partition_columns(parts, ids, index, typed=typed) is not None
    _same(snapshot_module.parse_snapshot(data), _by_loop(data, monkeypatch))


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p.update(topic=""),
        lambda p: p.update(partition=True),
        lambda p: p.update(partition=2**31),
        lambda p: p.update(replicas=[7, 7]),
        lambda p: p.update(replicas=(7,)),
        lambda p: p.update(replicas=[2**70]),
        lambda p: p.update(leader=5),
        lambda p: p.update(leader=2.0),
        lambda p: p.update(load={"size": float("nan")}),
        lambda p: p.update(load={"size": 10**400}),
        lambda p: p.update(load={"size": False}),
        lambda p: p.update(log_dirs=["/d/a", "/d/a"]),
        lambda p: p.update(log_dirs=["/d/b", "/d/b", None]),
        lambda p: p.update(log_dirs=[["/d/a"], None, None]),
    ],
)
def test_what_the_columns_do_not_take_the_loop_reads(change, monkeypatch) -> None:
    data = _varied()
    change(data["partitions"][0])
    ids = np.array([2, 7, 40])
    index = [{"/d/a": 0}, {"/d/a": 0, "/d/b": 1}, None]
    assert partition_columns(data["partitions"], ids, index, typed=False) is None
    try:
        expected = _by_loop(copy.deepcopy(data), monkeypatch)
    except SnapshotError as err:
        with pytest.raises(SnapshotError, match=f"^{re.escape(str(err))}$"):
            snapshot_module.parse_snapshot(data)
    else:
        _same(snapshot_module.parse_snapshot(data), expected)
