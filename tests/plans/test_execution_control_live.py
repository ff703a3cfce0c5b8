"""Execution control on the real dev cluster: a paused plan sends no new batch while
its moves in flight finish, a new throttle reaches the brokers' dynamic configs while
it runs, and a resumed plan runs to its end with nothing left behind."""

import pytest
from devkit import live
from devkit.polling import wait_until

from apps.plans.executor import execution_run, execution_step
from apps.plans.models import Execution, MoveState, PlanState
from apps.plans.services import (
    execution_pause,
    execution_resume,
    execution_tune,
    plan_approve,
    plan_request,
)
from tests.plans.test_executor_live import ON_ONE_AND_TWO

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


def test_it_pauses_rethrottles_and_resumes_a_running_plan(kafka_cluster, admin, topics, admin_user):
    bootstrap = kafka_cluster.bootstrap_servers
    topic = live.topic_name("control")
    topics.append(topic)
    live.topic_create(admin, topic, assignment=ON_ONE_AND_TWO)
    live.fill(bootstrap, topic, 6, 256 * 1024)
    # One move at a time (each lands on broker 3), so batches are easy to count.
    cluster = live.cluster_registered(
        bootstrap,
        admin_user,
        [topic],
        four_eyes=False,
        throttle_bytes_per_sec=10_000_000,
        max_moves_per_broker=1,
    )
    plan = plan_request(cluster=cluster, user=admin_user, mode="add-brokers", brokers=[3])
    assert plan.partition_count >= 2
    plan_approve(plan=plan, user=admin_user, throttle_rate=200_000)

    execution_step(plan=plan)  # starts at the throttle chosen at approval, sends batch 1
    found = live.throttles_set(admin, [topic])
    assert found["3:follower.replication.throttled.rate"] == "200000"

    plan.refresh_from_db()
    execution_pause(plan=plan, user=admin_user, reason="test")
    execution_tune(plan=plan, user=admin_user, throttle_rate=50_000_000)

    def first_batch_done() -> bool:
        assert execution_step(plan=plan) is False
        return not plan.moves.filter(state=MoveState.IN_PROGRESS).exists()

    wait_until(first_batch_done, 60, 0.5, what="the batch in flight finished")
    wait_until(
        lambda: (
            live.throttles_found(admin, [1, 2, 3], [topic]).get(
                "3:follower.replication.throttled.rate"
            )
            == "50000000"
        ),
        10,
        what="new throttle on broker 3",
    )
    # Paused: a few more steps send nothing new.
    for _ in range(3):
        assert execution_step(plan=plan) is False
    assert Execution.objects.get(plan=plan).batches == 1
    assert not live.in_flight(bootstrap, [topic])
    assert plan.moves.filter(state=MoveState.PENDING).count() == plan.partition_count - 1

    execution_resume(plan=plan, user=admin_user)
    plan = execution_run(plan=plan, poll_interval=0.5, max_seconds=120)

    assert plan.state == PlanState.COMPLETED, plan.error
    assert Execution.objects.get(plan=plan).batches == plan.partition_count
    live.no_throttles_left(admin, [topic])
