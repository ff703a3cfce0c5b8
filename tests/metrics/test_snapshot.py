"""`manage.py snapshot`: the cluster in the planner's snapshot format (BALANCING.md §1)."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from apps.balancer.engine.snapshot import parse_snapshot
from tests.support.factories import cluster_with_dead_broker_make, partition_load_create

pytestmark = pytest.mark.django_db


def test_it_writes_placement_with_the_latest_windows_loads(tmp_path):
    cluster = cluster_with_dead_broker_make()
    # An older window that must not be used.
    partition_load_create(
        cluster=cluster,
        topic="orders",
        partition=0,
        window=0,
        bytes_in=1.0,
        bytes_out=1.0,
        messages_in=1.0,
        size=1,
    )
    partition_load_create(
        cluster=cluster,
        topic="orders",
        partition=0,
        window=1,
        bytes_in=1048576.0,
        bytes_out=2097152.0,
        messages_in=900.0,
        size=73400320,
    )
    partition_load_create(
        cluster=cluster,
        topic="billing",
        partition=0,
        window=1,
        bytes_in=None,
        bytes_out=0.0,
        messages_in=None,
        size=10,
    )
    out = tmp_path / "snap.json"

    call_command("snapshot", "--cluster", "demo", "--output", str(out))

    snap = json.loads(out.read_text())
    assert snap["cluster"] == "demo"
    assert snap["taken_at"].endswith("Z")
    assert snap["window"] == {"start": "2026-11-22T04:01:00Z", "end": "2026-11-22T04:02:00Z"}
    assert snap["brokers"] == [
        {
            "id": 1,
            "rack": "a",
            "alive": True,
            "capacity": {"network_in": 125000000, "network_out": 125000000, "disk": 500000000000},
        },
        {"id": 2, "rack": "b", "alive": True, "capacity": {"disk": 250000000000}},
        {"id": 3, "rack": None, "alive": False},
    ]
    assert snap["partitions"] == [
        {
            "topic": "billing",
            "partition": 0,
            "replicas": [2, 1],
            "leader": 2,
            "load": {"bytes_out": 0.0, "size": 10},
        },
        {
            "topic": "orders",
            "partition": 0,
            "replicas": [1, 2, 3],
            "leader": 1,
            "load": {
                "bytes_in": 1048576.0,
                "bytes_out": 2097152.0,
                "messages_in": 900.0,
                "size": 73400320,
            },
        },
        {"topic": "orders", "partition": 1, "replicas": [3, 1], "leader": -1},
    ]
    parsed = parse_snapshot(snap)  # the planner accepts it
    assert parsed.n_partitions == 3 and parsed.n_brokers == 3
    assert list(tmp_path.iterdir()) == [out]  # no temporary file left behind


def test_it_writes_no_loads_before_the_first_window(tmp_path):
    cluster_with_dead_broker_make()
    out = tmp_path / "snap.json"

    call_command("snapshot", "--cluster", "demo", "--output", str(out))

    snap = json.loads(out.read_text())
    assert "window" not in snap
    assert all("load" not in p for p in snap["partitions"])
    assert len(snap["partitions"]) == 3


def test_it_rejects_an_unknown_cluster_in_one_line(tmp_path):
    out = tmp_path / "snap.json"
    with pytest.raises(CommandError) as excinfo:
        call_command("snapshot", "--cluster", "nope", "--output", str(out))

    assert str(excinfo.value) == "unknown cluster 'nope'"
    assert not out.exists()


def test_it_keeps_the_old_file_when_writing_fails(tmp_path, monkeypatch):
    cluster_with_dead_broker_make()
    out = tmp_path / "snap.json"
    out.write_text("previous")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("apps.metrics.management.commands.snapshot.os.replace", boom)
    with pytest.raises(OSError):
        call_command("snapshot", "--cluster", "demo", "--output", str(out))

    assert out.read_text() == "previous"
    assert list(tmp_path.iterdir()) == [out]
