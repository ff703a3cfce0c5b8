"""The executor in a process of its own (tests/plans/worker_process.py), for the faults
that kill or starve it: its topic, its plan, its environment, its report."""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

from devkit import live
from devkit.polling import wait_until

REPO = Path(__file__).resolve().parents[2]
WORKER = REPO / "tests" / "plans" / "worker_process.py"
# Six partitions on brokers 1 and 2; the plan gives each a copy on broker 3.
ON_ONE_AND_TWO = [[1, 2], [2, 1]] * 3


def worker_topic(admin, topics: list[str], bootstrap: str, kind: str) -> tuple[str, str]:
    """A topic on brokers 1 and 2 with 1.5 MiB per partition, and the plan JSON giving
    every partition a copy on broker 3 (5 per batch, the per-broker cap, then 1)."""
    topic = live.topic_name(kind)
    topics.append(topic)
    live.topic_create(admin, topic, assignment=ON_ONE_AND_TWO)
    # Kafka's replication quota is a rate over 11 one-second windows, so about 10 s of
    # it (4 MB at the plan's 400 kB/s) passes unthrottled first. The first batch's
    # 7.9 MB then copies for ~13 s more (the traffic alongside takes ~100 kB/s of the
    # throttle): time enough for the fault to strike mid-batch.
    live.fill(bootstrap, topic, 6, 1536 * 1024)
    plan = {
        "version": 1,
        "partitions": [
            {"topic": topic, "partition": p, "replicas": [3, r[0]]}
            for p, r in enumerate(ON_ONE_AND_TWO)
        ],
    }
    return topic, json.dumps(plan)


def worker_env(database_url: str, lease_seconds: int) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "CELERY_TASK_ALWAYS_EAGER": "1",
        "EXECUTOR_LEASE_SECONDS": str(lease_seconds),
        "EXECUTOR_POLL_INTERVAL": "0.5",
        "LOG_LEVEL": "WARNING",
    }


def worker_process(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def worker_start_until_in_flight(
    bootstrap: str, topic: str, plan_json: str, env: dict
) -> subprocess.Popen:
    """A worker process approving and executing the plan, once Kafka has its first
    batch in flight."""
    name = f"it-plans-{uuid.uuid4().hex[:6]}"
    worker = worker_process(["start", name, bootstrap, topic, plan_json], env)
    try:
        wait_until(
            lambda: live.in_flight(bootstrap, [topic]) or worker.poll() is not None,
            60,
            0.2,
            what="first batch in flight",
        )
    except AssertionError:
        worker.kill()
        raise
    assert worker.poll() is None, worker.stdout.read()
    return worker


def worker_report(env: dict) -> dict:
    """worker_process.py's report of the plan in its database."""
    process = worker_process(["report"], env)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0, out
    return json.loads(out.strip().splitlines()[-1])
