"""The executor on the real dev cluster: a throttled run, a cancel mid-way, and a
worker SIGKILLed mid-execution that another process resumes."""

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from support.polling import wait_until

from apps.clusters.services import cluster_sync
from apps.plans.models import Execution, MoveState, PlanState
from apps.plans.services import (
    execution_run,
    execution_step,
    plan_approve,
    plan_cancel,
    plan_request,
    plan_rollback_request,
)

from . import live

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

REPO = Path(__file__).resolve().parents[2]
# Six partitions on brokers 1 and 2 only; plans move load onto broker 3.
ON_ONE_AND_TWO = [[1, 2], [2, 1]] * 3


@pytest.fixture
def topic(admin, topics):
    name = live.topic_name("exec")
    topics.append(name)
    live.topic_create(admin, name, assignment=ON_ONE_AND_TWO)
    return name


def test_it_runs_a_throttled_plan_to_the_end_and_rolls_it_back(
    kafka_cluster, admin, topic, admin_user
):
    live.fill(kafka_cluster.bootstrap_servers, topic, 6, 512 * 1024)
    cluster = live.cluster_registered(
        kafka_cluster.bootstrap_servers, admin_user, [topic], throttle_bytes_per_sec=20_000_000
    )
    plan = plan_request(cluster=cluster, user=admin_user, mode="add-brokers", brokers=[3])
    plan_approve(plan=plan, user=admin_user)
    targets = {(e["topic"], e["partition"]): e["replicas"] for e in plan.reassignment["partitions"]}
    assert targets and all(3 in r for r in targets.values())

    execution_step(plan=plan)  # starts, sets throttles, sends the first batch
    # Dynamic configs reach the brokers asynchronously.
    throttles = wait_until(
        lambda: live.throttles_found(admin, [1, 2, 3], [topic]), 10, what="throttles set"
    )
    assert throttles.get("3:follower.replication.throttled.rate") == "20000000"
    assert f"{topic}:follower.replication.throttled.replicas" in throttles

    plan = execution_run(plan=plan, poll_interval=0.5, max_seconds=120)

    assert plan.state == PlanState.COMPLETED, plan.error
    now = live.replicas_in_sync(admin, topic, 30)
    for key, replicas in targets.items():
        assert now[key][0] == replicas
        assert now[key][2] == replicas[0]  # preferred leader elected
    assert not live.in_flight(kafka_cluster.bootstrap_servers, [topic])
    live.no_throttles_left(admin, [topic])
    execution = Execution.objects.get(plan=plan)
    assert execution.bytes_total > 0 and execution.bytes_done == execution.bytes_total
    assert execution.leaders_elected and not execution.throttle_applied
    assert set(plan.moves.values_list("state", flat=True)) == {MoveState.DONE}
    assert set(plan.moves.values_list("submissions", flat=True)) == {1}

    # Rollback: a new proposal restoring the starting assignment, approved like any other.
    assert cluster_sync(cluster=cluster)
    rollback = plan_rollback_request(plan=plan, user=admin_user, reason="undo")
    assert rollback.state == PlanState.PROPOSED and rollback.rollback_of == plan
    plan_approve(plan=rollback, user=admin_user)
    rollback = execution_run(plan=rollback, poll_interval=0.5, max_seconds=120)
    assert rollback.state == PlanState.COMPLETED, rollback.error
    restored = live.replicas_in_sync(admin, topic, 30)
    for p, replicas in enumerate(ON_ONE_AND_TWO):
        assert restored[(topic, p)][0] == replicas
    live.no_throttles_left(admin, [topic])


def test_it_cancels_mid_way_and_leaves_the_cluster_consistent(
    kafka_cluster, admin, topic, admin_user
):
    live.fill(kafka_cluster.bootstrap_servers, topic, 6, 2 * 1024 * 1024)
    # 100 kB/s: the moves can't finish before we cancel.
    cluster = live.cluster_registered(
        kafka_cluster.bootstrap_servers, admin_user, [topic], throttle_bytes_per_sec=100_000
    )
    before = {k: v[0] for k, v in live.placement(admin, [topic]).items()}
    plan = plan_request(cluster=cluster, user=admin_user, mode="add-brokers", brokers=[3])
    plan_approve(plan=plan, user=admin_user)
    targets = {(e["topic"], e["partition"]): e["replicas"] for e in plan.reassignment["partitions"]}

    execution_step(plan=plan)
    assert live.in_flight(kafka_cluster.bootstrap_servers, [topic])
    wait_until(lambda: live.throttles_found(admin, [1, 2, 3], [topic]), 10, what="throttles set")
    plan.refresh_from_db()
    plan_cancel(plan=plan, user=admin_user, reason="peak traffic")
    assert execution_step(plan=plan) is True

    plan.refresh_from_db()
    assert plan.state == PlanState.CANCELLED
    wait_until(
        lambda: not live.in_flight(kafka_cluster.bootstrap_servers, [topic]),
        20,
        what="no reassignment",
    )
    live.no_throttles_left(admin, [topic])
    now = live.replicas_in_sync(admin, topic, 30)
    for key, (replicas, _, _) in now.items():
        assert replicas in (before[key], targets.get(key, before[key])), (key, replicas)
    assert not plan.moves.filter(state__in=[MoveState.PENDING, MoveState.IN_PROGRESS]).exists()


def _process(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "plans" / "worker_process.py"), *args],
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


def test_a_killed_worker_is_resumed_and_nothing_runs_twice(kafka_cluster, admin, topic, tmp_path):
    live.fill(kafka_cluster.bootstrap_servers, topic, 6, 1024 * 1024)
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
    worker = _process(
        [
            "start",
            f"it-plans-{uuid.uuid4().hex[:6]}",
            kafka_cluster.bootstrap_servers,
            topic,
            plan_json,
        ],
        env,
    )
    try:
        # Kill it as soon as Kafka has its first batch in flight (throttled to 400 kB/s).
        wait_until(
            lambda: (
                live.in_flight(kafka_cluster.bootstrap_servers, [topic])
                or worker.poll() is not None
            ),
            60,
            0.2,
            what="first batch in flight",
        )
        assert worker.poll() is None, worker.stdout.read()
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(10)
    finally:
        if worker.poll() is None:
            worker.kill()
    in_flight_at_kill = live.in_flight(kafka_cluster.bootstrap_servers, [topic])
    assert in_flight_at_kill
    # Left behind by the dead worker.
    wait_until(lambda: live.throttles_found(admin, [1, 2, 3], [topic]), 10, what="throttles set")

    # The resume sweep skips a plan under a live lease: wait out the dead worker's.
    lease_until = _report(env)["lease_until"] or 0
    wait_until(lambda: time.time() > lease_until, 10, 0.1, what="the dead worker's lease lapsed")
    resumed = _process(["resume"], env)
    out, _ = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, out
    report = _report(env)

    assert report["state"] == "completed", report
    assert report["runs"] == 2 and report["leaders_elected"] and not report["throttle_applied"]
    # Nothing ran twice: every move reached Kafka exactly once, batch 2 only after the resume.
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
    assert not live.in_flight(kafka_cluster.bootstrap_servers, [topic])
    live.no_throttles_left(admin, [topic])
