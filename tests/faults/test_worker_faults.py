"""The executing worker SIGKILLed mid-execution (a batch in flight): another process on
the same database resumes the plan and nothing is sent twice, with acks=all traffic on
the plan's topic alongside. The worker is tests/plans/worker_process.py, on its own
SQLite file, as a restarted Celery worker would share the real database."""

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from plans import live
from support.polling import wait_until

from .traffic import Traffic

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

REPO = Path(__file__).resolve().parents[2]
WORKER = REPO / "tests" / "plans" / "worker_process.py"
# Six partitions on brokers 1 and 2; the plan gives each a copy on broker 3.
ON_ONE_AND_TWO = [[1, 2], [2, 1]] * 3


def _process(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _report(env: dict) -> dict:
    """worker_process.py's report of the plan in its database."""
    process = _process(["report"], env)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0, out
    return json.loads(out.strip().splitlines()[-1])


def test_it_resumes_a_killed_worker_and_sends_nothing_twice(
    kafka_cluster, admin, topics, tmp_path, fault_row, capsys
):
    fault_row["fault"] = "executing worker SIGKILLed"
    bootstrap = kafka_cluster.bootstrap_servers
    topic = live.topic_name("exec")
    topics.append(topic)
    live.topic_create(admin, topic, assignment=ON_ONE_AND_TWO)
    live.fill(bootstrap, topic, 6, 1024 * 1024)
    # Every partition gets a copy on broker 3: 5 per batch (the per-broker cap), then 1.
    plan_json = json.dumps(
        {
            "version": 1,
            "partitions": [
                {"topic": topic, "partition": p, "replicas": [3, r[0]]}
                for p, r in enumerate(ON_ONE_AND_TWO)
            ],
        }
    )
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'worker.sqlite3'}",
        "CELERY_TASK_ALWAYS_EAGER": "1",
        "EXECUTOR_LEASE_SECONDS": "3",
        "EXECUTOR_POLL_INTERVAL": "0.5",
        "LOG_LEVEL": "WARNING",
    }
    traffic = Traffic.start(bootstrap, topic, len(ON_ONE_AND_TWO))
    try:
        worker = _process(
            ["start", f"it-plans-{uuid.uuid4().hex[:6]}", bootstrap, topic, plan_json], env
        )
        try:
            # Kill it as soon as Kafka has its first batch in flight (throttled to 400 kB/s).
            wait_until(
                lambda: live.in_flight(bootstrap, [topic]) or worker.poll() is not None,
                60,
                0.2,
                what="first batch in flight",
            )
            assert worker.poll() is None, worker.stdout.read()
            os.kill(worker.pid, signal.SIGKILL)
            killed = time.monotonic()
            worker.wait(10)
        finally:
            if worker.poll() is None:
                worker.kill()
        assert live.in_flight(bootstrap, [topic])
        # Left behind by the dead worker.
        wait_until(lambda: live.throttles_found(admin, [1, 2, 3], [topic]), 10, what="throttles")

        # The resume sweep skips a plan under a live lease: wait out the dead worker's.
        lease_until = _report(env)["lease_until"] or 0
        wait_until(lambda: time.time() > lease_until, 10, 0.1, what="the dead worker's lease")
        resumed = _process(["resume"], env)
        out, _ = resumed.communicate(timeout=180)
        recovered = time.monotonic() - killed
        assert resumed.returncode == 0, out
        report = _report(env)

        assert report["state"] == "completed", report
        assert report["runs"] == 2 and report["leaders_elected"]
        assert not report["throttle_applied"]
        # Nothing ran twice: every move reached Kafka once, batch 2 only after the resume.
        assert {state for state, _, _ in report["moves"].values()} == {"done"}
        assert {submissions for _, submissions, _ in report["moves"].values()} == {1}
        assert sorted({batch for _, _, batch in report["moves"].values()}) == [1, 2]
        assert report["actions"].count("execution.started") == 1
        assert report["actions"].count("execution.throttle_set") == 1
        assert report["actions"].count("execution.batch_submitted") == 2
        assert report["actions"][-1] == "execution.completed"

        now = live.placement(admin, [topic])
        for p, replicas in enumerate(ON_ONE_AND_TWO):
            assert now[(topic, p)][0] == [3, replicas[0]]
        assert not live.in_flight(bootstrap, [topic])
        live.no_throttles_left(admin, [topic])
    finally:
        counts = traffic.finish()
    fault_row.update(
        counts,
        recover_s=round(recovered, 1),
        recovery="kill → the plan completed by another process (lease 3 s)",
    )
    with capsys.disabled():
        print(f"\nresumed plan completed {recovered:.1f} s after the kill; traffic: {counts}")
    assert counts["lost"] == 0 and counts["acked"] > 0
