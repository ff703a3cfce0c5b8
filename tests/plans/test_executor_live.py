"""The executor on the real dev cluster: a throttled run and a cancel mid-way (a worker
SIGKILLed mid-execution is a case of the fault matrix, tests/faults)."""

import pytest
from devkit import live
from devkit.polling import wait_until

from apps.clusters.services import cluster_sync
from apps.plans.executor import execution_run, execution_step
from apps.plans.models import Execution, MoveState, PlanState
from apps.plans.services import plan_approve, plan_cancel, plan_request, plan_rollback_request

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

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
        kafka_cluster.bootstrap_servers,
        admin_user,
        [topic],
        four_eyes=False,
        throttle_bytes_per_sec=20_000_000,
    )
    plan = plan_request(cluster=cluster, user=admin_user, mode="add-brokers", brokers=[3])
    plan_approve(plan=plan, user=admin_user)
    targets = live.plan_targets(plan)
    assert targets and all(3 in r for r in targets.values())

    execution_step(plan=plan)  # starts, sets throttles, sends the first batch
    # Dynamic configs reach the brokers asynchronously.
    throttles = live.throttles_set(admin, [topic])
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
        kafka_cluster.bootstrap_servers,
        admin_user,
        [topic],
        four_eyes=False,
        throttle_bytes_per_sec=100_000,
    )
    before = {k: v[0] for k, v in live.placement(admin, [topic]).items()}
    plan = plan_request(cluster=cluster, user=admin_user, mode="add-brokers", brokers=[3])
    plan_approve(plan=plan, user=admin_user)
    targets = live.plan_targets(plan)

    execution_step(plan=plan)
    assert live.in_flight(kafka_cluster.bootstrap_servers, [topic])
    live.throttles_set(admin, [topic])
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
