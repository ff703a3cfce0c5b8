"""`up --log-dirs N`: each broker gets N log dirs (JBOD), controllers one; no JVM needed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from dev_cluster import DevCluster

REPO_ROOT = Path(__file__).resolve().parents[2]
CLI = REPO_ROOT / "scripts" / "dev-cluster"


def _props(cluster: DevCluster, node_id: int) -> dict[str, str]:
    path = cluster._write_config(cluster.nodes[node_id])
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    return dict(line.split("=", 1) for line in lines)


def test_it_gives_each_broker_its_log_dirs_and_each_controller_one(tmp_path: Path) -> None:
    cluster = DevCluster(run_dir=tmp_path / "kafka", log_dirs=2)

    broker = _props(cluster, 1)["log.dirs"].split(",")
    controller = _props(cluster, 100)["log.dirs"].split(",")

    node = tmp_path / "kafka" / "1"
    assert broker == [str(node / "data"), str(node / "data-1")]
    assert cluster.data_dirs(1) == [node / "data", node / "data-1"]
    assert all(Path(d).is_dir() for d in broker)
    assert controller == [str(tmp_path / "kafka" / "100" / "data")]


def test_it_keeps_one_log_dir_by_default(tmp_path: Path) -> None:
    cluster = DevCluster(run_dir=tmp_path / "kafka")

    assert _props(cluster, 2)["log.dirs"] == str(tmp_path / "kafka" / "2" / "data")


def test_it_counts_the_replicas_of_every_log_dir(tmp_path: Path) -> None:
    cluster = DevCluster(run_dir=tmp_path / "kafka", log_dirs=2)
    first, second = cluster.data_dirs(1)
    for path in (first / "orders-0", second / "orders-1", second / "__cluster_metadata-0"):
        path.mkdir(parents=True)

    assert cluster.replicas_held(1) == 2


def _cli(*args: str, run_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KAFKA_DEV_DIR": str(run_dir)}
    return subprocess.run(
        [str(CLI), *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60
    )


def test_it_refuses_a_log_dir_count_out_of_range(tmp_path: Path) -> None:
    result = _cli("up", "--no-redis", "--log-dirs", "0", run_dir=tmp_path / "kafka")

    assert result.returncode == 1
    assert "--log-dirs must be from 1 to 8, got 0" in result.stderr
    assert not (tmp_path / "kafka" / "options.json").exists()


def test_it_refuses_to_change_the_log_dirs_of_a_formatted_run_dir(tmp_path: Path) -> None:
    run_dir = tmp_path / "kafka"
    run_dir.mkdir()
    (run_dir / "cluster.id").write_text("abc\n")
    (run_dir / "options.json").write_text(json.dumps({"log_dirs": 1}))

    result = _cli("up", "--no-redis", "--log-dirs", "2", run_dir=run_dir)

    assert result.returncode == 1
    assert "formatted with log_dirs=1, not 2" in result.stderr
    assert json.loads((run_dir / "options.json").read_text())["log_dirs"] == 1
