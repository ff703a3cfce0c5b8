"""The local Kafka dev cluster tooling, exercised against the real JVM brokers."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
from dev_cluster import DevCluster, DevClusterError

REPO_ROOT = Path(__file__).resolve().parents[2]
CLI = REPO_ROOT / "scripts" / "dev-cluster"


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # Same environment as the fixtures (KAFKA_DEV_DIR, port overrides) unless told otherwise.
    return subprocess.run(
        [str(CLI), *args],
        cwd=REPO_ROOT,
        env=env if env is not None else dict(os.environ),
        capture_output=True,
        text=True,
        timeout=180,
    )


def pids(cluster: DevCluster) -> dict[int, int | None]:
    return {node_id: cluster.node_pid(node_id) for node_id in cluster.nodes}


@pytest.mark.integration
def test_it_shows_three_running_brokers_with_racks(kafka_cluster: DevCluster) -> None:
    nodes = {n.node_id: n for n in kafka_cluster.status()}

    brokers = {n.node_id: n.rack for n in nodes.values() if n.role == "broker"}
    assert brokers == {1: "a", 2: "b", 3: "c"}
    assert all(nodes[b].running and nodes[b].in_metadata for b in brokers)
    assert nodes[100].role == "controller" and nodes[100].running
    assert kafka_cluster.metadata_brokers() == {1, 2, 3}

    result = run_cli("status", "--json")
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["bootstrap_servers"] == kafka_cluster.bootstrap_servers
    assert {(n["node_id"], n["rack"], n["running"]) for n in shown["nodes"]} == {
        (100, None, True),
        (1, "a", True),
        (2, "b", True),
        (3, "c", True),
    }


@pytest.mark.integration
def test_it_keeps_the_same_processes_when_up_runs_twice(kafka_cluster: DevCluster) -> None:
    before = pids(kafka_cluster)
    # A CLI `up` marks the cluster as wanted by a person, so the session would no longer stop
    # a cluster it started; put that mark back as it was.
    auto_flag = kafka_cluster.run_dir / "leases" / "kafka.auto-started"
    was_auto = auto_flag.exists()

    kafka_cluster.up(redis=False)
    result = run_cli("up", "--no-redis")
    if was_auto:
        auto_flag.touch()

    assert result.returncode == 0, result.stderr
    assert None not in before.values()
    assert pids(kafka_cluster) == before


@pytest.mark.integration
def test_it_stops_and_starts_a_broker_from_the_cli(restore_brokers: DevCluster) -> None:
    cluster = restore_brokers

    stopped = run_cli("stop-broker", "2")

    assert stopped.returncode == 0, stopped.stderr
    assert cluster.node_pid(2) is None
    # A controlled shutdown fences the broker at once; allow a little metadata lag.
    assert cluster.wait_for_brokers({1, 3}, timeout=30, exact=True) == {1, 3}
    status = {n.node_id: n for n in cluster.status()}
    assert not status[2].running and status[2].in_metadata is False
    assert status[1].running and status[3].running

    started = run_cli("start-broker", "2")

    assert started.returncode == 0, started.stderr
    assert cluster.node_pid(2) is not None
    assert 2 in cluster.metadata_brokers()


@pytest.mark.integration
def test_it_brings_back_a_killed_broker(restore_brokers: DevCluster) -> None:
    cluster = restore_brokers
    old_pid = cluster.node_pid(3)

    cluster.stop_broker(3, kill=True)

    assert cluster.node_pid(3) is None
    # SIGKILL: no controlled shutdown, so the controller fences it after the session timeout.
    assert cluster.wait_for_brokers({1, 2}, timeout=30, exact=True) == {1, 2}

    cluster.start_broker(3)

    assert cluster.node_pid(3) not in (None, old_pid)
    assert cluster.metadata_brokers() == {1, 2, 3}


def test_it_rejects_an_unknown_broker_id_with_exit_code_2() -> None:
    for args in (["stop-broker", "7"], ["start-broker", "100"], ["stop-broker", "4", "--kill"]):
        result = run_cli(*args)

        assert result.returncode == 2, (args, result)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "unknown broker id" in lines[0], result.stderr
        assert "brokers are 1, 2, 3" in lines[0]


def test_it_says_clearly_when_java_is_missing(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env.update(
        PATH=str(tmp_path),
        KAFKA_DEV_DIR=str(tmp_path / "kafka"),
        PYTHONPATH=str(REPO_ROOT / "scripts"),
    )

    # Straight through the interpreter: the bash wrapper itself needs PATH.
    result = subprocess.run(
        [sys.executable, "-m", "dev_cluster", "up", "--no-redis"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 1
    assert "java not found" in result.stderr


@pytest.mark.integration
def test_it_provides_a_redis_that_answers_ping(redis_server: str) -> None:
    parsed = urlparse(redis_server)

    with socket.create_connection((parsed.hostname, parsed.port or 6379), timeout=5) as sock:
        sock.sendall(b"PING\r\n")
        reply = sock.recv(64)

    assert reply.startswith(b"+PONG")


def test_it_rejects_an_unknown_controller_id_with_exit_code_2(tmp_path: Path) -> None:
    env = {**os.environ, "KAFKA_DEV_DIR": str(tmp_path / "kafka")}

    result = run_cli("stop-controller", "101", env=env)

    assert result.returncode == 2, result
    assert "unknown controller id 101 (controllers are 100)" in result.stderr


def test_it_refuses_an_even_number_of_controllers(tmp_path: Path) -> None:
    env = {**os.environ, "KAFKA_DEV_DIR": str(tmp_path / "kafka")}

    result = run_cli("up", "--no-redis", "--controllers", "2", env=env)

    assert result.returncode == 1
    assert "--controllers must be an odd number" in result.stderr
    assert not (tmp_path / "kafka" / "options.json").exists()


def test_it_refuses_to_change_the_controller_count_of_a_formatted_run_dir(tmp_path: Path) -> None:
    run_dir = tmp_path / "kafka"
    run_dir.mkdir()
    (run_dir / "cluster.id").write_text("abc\n")
    (run_dir / "options.json").write_text(json.dumps({"controllers": 1}))
    env = {**os.environ, "KAFKA_DEV_DIR": str(run_dir)}

    result = run_cli("up", "--no-redis", "--controllers", "3", env=env)

    assert result.returncode == 1
    assert "formatted with controllers=1, not 3" in result.stderr
    assert json.loads((run_dir / "options.json").read_text())["controllers"] == 1


def test_it_rejects_an_unknown_kafka_version(tmp_path: Path) -> None:
    env = {**os.environ, "KAFKA_DEV_DIR": str(tmp_path / "kafka")}

    result = run_cli("up", "--no-redis", "--kafka-version", "2.8", env=env)

    assert result.returncode == 1
    assert "unknown Kafka version '2.8' (known: 4.3 (4.3.1), 3.9 (3.9.2))" in result.stderr


def test_it_refuses_to_run_another_kafka_version_on_formatted_data(tmp_path: Path) -> None:
    run_dir = tmp_path / "kafka"
    run_dir.mkdir()
    (run_dir / "cluster.id").write_text("abc\n")  # formatted by the default 4.x line
    env = {**os.environ, "KAFKA_DEV_DIR": str(run_dir)}

    result = run_cli("up", "--no-redis", "--kafka-version", "3.9.2", env=env)

    assert result.returncode == 1
    assert "formatted with kafka_version=4.3, not 3.9" in result.stderr


def test_it_leaves_no_mark_or_lease_when_the_cluster_fails_to_come_up(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no java: up() fails before any JVM starts
    monkeypatch.delenv("JAVA_HOME", raising=False)
    cluster = DevCluster(run_dir=tmp_path / "kafka")

    with pytest.raises(DevClusterError, match="java not found"):
        with cluster.use(kafka=True):
            pass

    assert list((tmp_path / "kafka" / "leases").iterdir()) == []
