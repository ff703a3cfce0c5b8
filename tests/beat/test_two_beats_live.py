"""Two real `celery beat` processes on one database and Redis: only the leader sends
the entries; SIGKILL it and the other sends them within the lock's lifetime."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from devkit.polling import wait_until

from tests.support.migrated import sqlite_migrated

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
REDIS_DB = 13  # ours alone: the dev server uses 0, the browser tests 11, the faults 12
LOCK_SECONDS = 3
SENT = re.compile(r"Sending due task clusters-sync\b")


def _sends(log: Path) -> int:
    return len(SENT.findall(log.read_text(errors="replace"))) if log.exists() else 0


@pytest.fixture
def beats(redis_server, tmp_path: Path):
    database = tmp_path / "beat.sqlite3"
    sqlite_migrated(database)
    redis_url = redis_server.rsplit("/", 1)[0] + f"/{REDIS_DB}"
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{database}",
        "REDIS_URL": redis_url,
        "CELERY_BROKER_URL": redis_url,
        "CLUSTER_SYNC_INTERVAL": "1",
        "BEAT_LEADER_LOCK_SECONDS": str(LOCK_SECONDS),
    }
    processes: dict[str, subprocess.Popen] = {}
    logs: dict[str, Path] = {}
    for name in ("a", "b"):
        logs[name] = tmp_path / f"beat-{name}.log"
        with logs[name].open("wb") as log:
            processes[name] = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "balancer_site", "beat"]
                + ["--loglevel=INFO", f"--schedule={tmp_path / name}.schedule"],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
    yield processes, logs
    for process in processes.values():
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
    redis.Redis.from_url(redis_url).flushdb()


def test_two_beats_send_each_entry_once_and_the_survivor_takes_over(beats) -> None:
    processes, logs = beats
    leader = wait_until(
        lambda: next((n for n in logs if _sends(logs[n]) >= 3), None),
        timeout=90,
        what="one beat sending clusters-sync three times",
    )
    follower = "b" if leader == "a" else "a"
    assert _sends(logs[follower]) == 0, logs[follower].read_text()[-2000:]

    os.killpg(processes[leader].pid, signal.SIGKILL)
    killed = time.monotonic()
    processes[leader].wait(timeout=30)
    wait_until(
        lambda: _sends(logs[follower]) >= 1,
        timeout=LOCK_SECONDS * 10,
        interval=0.2,
        what="the surviving beat sending",
    )
    takeover = time.monotonic() - killed
    # A figure, not a bound: how long a supervisor-less control plane goes without beat.
    print(f"takeover after SIGKILL of the leader: {takeover:.1f} s (lock {LOCK_SECONDS} s)")
