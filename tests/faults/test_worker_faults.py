"""The executing worker SIGKILLed mid-execution (a batch in flight): another process on
the same database resumes the plan and nothing is sent twice, with acks=all traffic on
the plan's topic alongside. The worker is tests/plans/worker_process.py, on its own
SQLite file, as a restarted Celery worker would share the real database."""

import os
import signal
import time

import pytest
from devkit import live
from devkit.polling import wait_until

from tests.faults.traffic import Traffic
from tests.faults.worker import (
    ON_ONE_AND_TWO,
    worker_env,
    worker_process,
    worker_report,
    worker_start_until_in_flight,
    worker_topic,
)

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


def test_it_resumes_a_killed_worker_and_sends_nothing_twice(
    kafka_cluster, admin, topics, tmp_path, fault_row, fault_survived
):
    fault_row["fault"] = "executing worker SIGKILLed"
    bootstrap = kafka_cluster.bootstrap_servers
    topic, plan_json = worker_topic(admin, topics, bootstrap, "exec")
    env = worker_env(f"sqlite:///{tmp_path / 'worker.sqlite3'}", lease_seconds=3)
    traffic = Traffic.start(bootstrap, topic, len(ON_ONE_AND_TWO))
    try:
        # Started, and the fault strikes once its first batch is in flight (400 kB/s).
        worker = worker_start_until_in_flight(bootstrap, topic, plan_json, env)
        try:
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
        lease_until = worker_report(env)["lease_until"] or 0
        wait_until(lambda: time.time() > lease_until, 10, 0.1, what="the dead worker's lease")
        resumed = worker_process(["resume"], env)
        out, _ = resumed.communicate(timeout=180)
        recovered = time.monotonic() - killed
        assert resumed.returncode == 0, out
        report = worker_report(env)

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
    fault_survived(
        counts,
        recovered=recovered,
        recovery="kill → the plan completed by another process (lease 3 s)",
        said=f"resumed plan completed {recovered:.1f} s after the kill",
    )
