"""Two unreachable clusters beside the healthy dev cluster, under a real Celery beat and
real workers (the queues and the worker options of scripts/run): the healthy cluster
still syncs every CLUSTER_SYNC_INTERVAL and the queues do not grow.

The issue's figure is for 3 minutes at the product's 10 s interval; the suite runs
ISOLATION_TEST_SECONDS (default 30) at ISOLATION_TEST_INTERVAL (default 5 s: the same six
rounds in half the time; an unreachable connect still hangs KAFKA_CONNECT_TIMEOUT, 5 s,
longer than the 2 s tolerance, so a healthy sync held up by one still fails the test):
    ISOLATION_TEST_SECONDS=180 ISOLATION_TEST_INTERVAL=10 .venv/bin/python -m pytest \\
        tests/clusters/test_isolation_live.py -q -s
prints the sync intervals and queue lengths it saw.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pytest
import redis
from devkit.polling import wait_until

from tests.support.migrated import sqlite_migrated
from tests.support.processes import processes_start, processes_stop

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
CELERY = [str(REPO / ".venv" / "bin" / "celery"), "-A", "balancer_site"]
DURATION = float(os.environ.get("ISOLATION_TEST_SECONDS", "30"))
INTERVAL = float(os.environ.get("ISOLATION_TEST_INTERVAL", "5"))
QUEUES = ("clusters", "celery")
# Unroutable (TEST-NET-1, RFC 5737): connects hang until the connect timeout.
UNROUTABLE = "192.0.2.1:9092"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: connects are refused


@dataclass
class Observed:
    syncs: list[datetime] = field(default_factory=list)
    queue_lengths: dict[str, list[int]] = field(default_factory=lambda: {q: [] for q in QUEUES})

    @property
    def intervals(self) -> list[float]:
        return [(b - a).total_seconds() for a, b in zip(self.syncs, self.syncs[1:], strict=False)]


@pytest.fixture
def stack(tmp_path, kafka_cluster, redis_server) -> Iterator[dict]:
    """Migrated SQLite file, three registered clusters, then beat and two workers."""
    # A Redis database of its own: nothing else's tasks in these queues.
    broker_url = redis_server.rsplit("/", 1)[0] + "/9"
    redis.Redis.from_url(broker_url).flushdb()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "REDIS_URL": broker_url,
        "CLUSTER_SYNC_INTERVAL": str(INTERVAL),
        "METRICS_SAMPLE_INTERVAL": str(INTERVAL),
        # No aggregation worker here (Spark): nothing may be routed to its queue.
        "METRICS_AGGREGATE_INTERVAL": "86400",
        "PYTHONPATH": str(REPO),
    }
    manage = [sys.executable, str(REPO / "manage.py")]
    sqlite_migrated(tmp_path / "db.sqlite3")
    register = (
        "from apps.clusters.services import cluster_register as r;"
        f"r(name='healthy', bootstrap_servers='{kafka_cluster.bootstrap_servers}');"
        f"r(name='refused', bootstrap_servers='127.0.0.1:{_closed_port()}');"
        f"r(name='unroutable', bootstrap_servers='{UNROUTABLE}')"
    )
    subprocess.run([*manage, "shell", "-c", register], env=env, check=True, capture_output=True)

    commands = {
        # As scripts/run starts them.
        "clusters-worker": [
            *CELERY,
            "worker",
            "-P",
            "threads",
            "--concurrency=8",
            "-Q",
            "clusters",
            "-n",
            f"clusters-{os.getpid()}@%h",
        ],
        "worker": [
            *CELERY,
            "worker",
            "--concurrency=1",
            "-Q",
            "celery",
            "-n",
            f"worker-{os.getpid()}@%h",
        ],
        "beat": [*CELERY, "beat", f"--schedule={tmp_path / 'beat-schedule'}", "--pidfile="],
    }
    processes, logs = processes_start(commands=commands, env=env, cwd=REPO, logs_dir=tmp_path)
    try:
        yield {
            "db": tmp_path / "db.sqlite3",
            "redis": redis.Redis.from_url(broker_url),
            "logs": logs,
        }
    finally:
        processes_stop(processes)


def _last_synced(db: Path, name: str) -> datetime | None:
    with sqlite3.connect(db, timeout=20) as conn:
        row = conn.execute(
            "SELECT last_synced_at FROM clusters_cluster WHERE name = ?", (name,)
        ).fetchone()
    return datetime.fromisoformat(row[0]) if row and row[0] else None


def _observe(stack: dict, seconds: float) -> Observed:
    seen = Observed()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        synced = _last_synced(stack["db"], "healthy")
        if synced and (not seen.syncs or synced != seen.syncs[-1]):
            seen.syncs.append(synced)
        for queue in QUEUES:
            seen.queue_lengths[queue].append(stack["redis"].llen(queue))
        time.sleep(0.25)  # sampling period of the observer, not a wait for a condition
    return seen


def test_it_keeps_the_healthy_cluster_on_time_beside_two_unreachable_ones(stack):
    # Warm-up: the workers are up once the healthy cluster synced the first time.
    wait_until(lambda: _last_synced(stack["db"], "healthy") is not None, timeout=60)
    seen = _observe(stack, DURATION)

    intervals = seen.intervals
    lengths = {q: max(v) for q, v in seen.queue_lengths.items()}
    print(
        f"\n{DURATION:.0f} s, {len(seen.syncs)} syncs of the healthy cluster; intervals "
        f"min {min(intervals):.1f} s, max {max(intervals):.1f} s, "
        f"mean {sum(intervals) / len(intervals):.2f} s; longest queues {lengths}; "
        f"queues at the end { ({q: v[-1] for q, v in seen.queue_lengths.items()}) }"
    )
    assert len(intervals) >= DURATION // INTERVAL - 2
    assert all(INTERVAL - 2 <= i <= INTERVAL + 2 for i in intervals), intervals
    # Nothing piles up: at most one fan-out's tasks are ever waiting.
    assert all(length <= 6 for length in lengths.values()), lengths

    with sqlite3.connect(stack["db"], timeout=20) as conn:
        backoff = dict(
            conn.execute(
                "SELECT name, sync_failures FROM clusters_cluster WHERE name != 'healthy'"
            ).fetchall()
        )
    # Backed off: far fewer tries than rounds.
    assert all(1 <= failures < DURATION / INTERVAL for failures in backoff.values()), backoff

    log = stack["logs"]["clusters-worker"].read_text()
    assert "Traceback" not in log
    for name in ("refused", "unroutable"):
        # Syncs warn once when the cluster is first found unreachable; nothing per round.
        assert log.count(f"cluster {name}: unreachable") == 1, name
