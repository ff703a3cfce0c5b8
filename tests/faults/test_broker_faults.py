"""Brokers dying under a running plan, on the real dev cluster, with acks=all traffic.

The plan moves 4 partitions onto broker 3, throttled to 1 MB/s so the moves are still
copying when the fault strikes; 2 more partitions already have a replica on broker 3,
so its death leaves something for self-healing to heal.
"""

import time

import pytest
from plans import live
from support.polling import wait_until

from apps.clusters.services import cluster_sync
from apps.plans.models import MoveState, PlanMode, PlanOrigin, PlanState
from apps.plans.services import (
    cluster_detect,
    execution_run,
    execution_step,
    executions_resume,
    plan_approve,
    plan_create,
)

from .brokers import broker_restart
from .traffic import Traffic

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

# p0-p3 on brokers 1 and 2 (the plan moves them onto 3); p4, p5 already on broker 3.
PLACEMENT = [[1, 2], [2, 1], [1, 2], [2, 1], [1, 3], [2, 3]]
TARGETS = {0: [3, 1], 1: [3, 2], 2: [3, 1], 3: [3, 2]}
GRACE = 5  # the policy's dead-broker grace before self-healing is proposed


def _plan_onto_broker_3(kafka_cluster, admin, topics, admin_user, targets=TARGETS):
    """A topic with some data, its cluster registered, and an approved plan moving
    p0-p3 onto broker 3 at 1 MB/s, with self-healing auto-approved."""
    topic = live.topic_name("fault")
    topics.append(topic)
    live.topic_create(admin, topic, assignment=PLACEMENT)
    live.fill(kafka_cluster.bootstrap_servers, topic, 4, 3 * 1024 * 1024)
    cluster = live.cluster_registered(
        kafka_cluster.bootstrap_servers,
        admin_user,
        [topic],
        throttle_bytes_per_sec=1_000_000,
        dead_broker_grace=GRACE,
        auto_approve_self_healing=True,
    )
    plan = plan_create(
        cluster=cluster,
        origin=PlanOrigin.OPERATOR,
        mode=PlanMode.FULL,
        reassignment={
            "version": 1,
            "partitions": [
                {"topic": topic, "partition": p, "replicas": r} for p, r in targets.items()
            ],
        },
        assignment_before={(topic, p): r for p, r in enumerate(PLACEMENT)},
        report={},
        actor=admin_user,
    )
    plan_approve(plan=plan, user=admin_user)
    return topic, cluster, plan


def _step_until_copying(plan) -> None:
    """Step the plan until Kafka has its moves in flight and bytes are arriving."""

    def copying() -> bool:
        execution_step(plan=plan)
        return plan.moves.filter(state=MoveState.IN_PROGRESS, bytes_done__gt=0).exists()

    wait_until(copying, 60, 0.5, what="the moves copying")


def _heal(cluster, timeout: float):
    """What beat does, here every second: sync, detect; the self-healing plan it
    proposes is auto-approved by the policy and run (by the worker in production)."""

    def proposed():
        assert cluster_sync(cluster=cluster), cluster.last_sync_error
        plan = cluster_detect(cluster=cluster)
        if plan is None:
            plan = cluster.plans.filter(mode=PlanMode.FIX_OFFLINE).first()
        return plan

    plan = wait_until(proposed, timeout, 1, what="a self-healing plan")
    assert plan.mode == PlanMode.FIX_OFFLINE and plan.decided_by_policy, plan.trigger
    return execution_run(plan=plan, poll_interval=0.5, max_seconds=120)


def _broker_back_and_throttles_gone(kafka_cluster, admin, topic, plan, broker: int) -> None:
    """The dead broker's throttle rate outlived it: the resume sweep deletes it once the
    broker is back (here: one step of the finished plan, as the sweep enqueues it)."""
    broker_restart(kafka_cluster, broker)
    assert plan.pk in executions_resume()
    execution_step(plan=plan)
    live.no_throttles_left(admin, [topic])


def test_it_ends_the_plan_when_its_target_broker_dies_and_heals_the_cluster(
    kafka_cluster, restore_brokers, admin, topics, admin_user, fault_row, capsys
):
    fault_row["fault"] = "target broker SIGKILLed mid-move"
    bootstrap = kafka_cluster.bootstrap_servers
    topic, cluster, plan = _plan_onto_broker_3(kafka_cluster, admin, topics, admin_user)
    traffic = Traffic.start(bootstrap, topic, len(PLACEMENT))
    try:
        _step_until_copying(plan)
        killed = time.time()
        kafka_cluster.stop_broker(3, kill=True)

        plan = execution_run(plan=plan, poll_interval=0.5, max_seconds=120)
        ended = plan.finished_at.timestamp() - killed
        assert plan.state == PlanState.FAILED, plan.error
        assert "target broker 3 dead" in plan.error
        with capsys.disabled():
            print(f"\nplan #{plan.pk} ended {ended:.1f} s after broker 3 was killed: {plan.error}")
        # Kafka holds no reassignment (certainly none to the dead broker), no throttle.
        assert not live.in_flight(bootstrap, [topic])
        live.no_throttles_left(admin, [topic])
        now = live.placement(admin, [topic])
        for p in TARGETS:
            assert sorted(now[(topic, p)][0]) == sorted(PLACEMENT[p]), now[(topic, p)]
        actions = set(plan.moves.filter(state=MoveState.FAILED).values_list("error", flat=True))
        assert actions and all("cancelled in Kafka" in a for a in actions), actions

        healer = _heal(cluster, timeout=GRACE + 60)
        assert healer.state == PlanState.COMPLETED, healer.error
        healed = live.replicas_in_sync(admin, topic, 60)
        for key, (replicas, _, _) in healed.items():
            assert len(replicas) == 2 and set(replicas) <= {1, 2}, (key, replicas)
        recovered = healer.finished_at.timestamp() - killed
        acked = traffic.producer.acked_count
        traffic.acked_since(acked)

        _broker_back_and_throttles_gone(kafka_cluster, admin, topic, plan, 3)
    finally:
        counts = traffic.finish()
    fault_row.update(
        counts,
        recover_s=round(recovered, 1),
        recovery=f"kill → self-healing plan completed (the plan ended {ended:.1f} s after)",
    )
    with capsys.disabled():
        print(f"healed {recovered:.1f} s after the kill; traffic: {counts}")
    assert counts["lost"] == 0 and counts["acked"] > 0


def test_it_finishes_the_plan_when_a_source_broker_dies(
    kafka_cluster, restore_brokers, admin, topics, admin_user, fault_row, capsys
):
    fault_row["fault"] = "source broker SIGKILLed mid-move"
    bootstrap = kafka_cluster.bootstrap_servers
    # Every move drops broker 2 and keeps broker 1, which still has every record.
    targets = dict.fromkeys(range(4), [3, 1])
    topic, cluster, plan = _plan_onto_broker_3(
        kafka_cluster, admin, topics, admin_user, targets=targets
    )
    traffic = Traffic.start(bootstrap, topic, len(PLACEMENT))
    try:
        _step_until_copying(plan)
        killed = time.time()
        kafka_cluster.stop_broker(2, kill=True)

        plan = execution_run(plan=plan, poll_interval=0.5, max_seconds=150)
        assert plan.state == PlanState.COMPLETED, plan.error
        recovered = plan.finished_at.timestamp() - killed
        assert not live.in_flight(bootstrap, [topic])
        now = live.placement(admin, [topic])
        for p, replicas in targets.items():
            assert now[(topic, p)][0] == replicas and sorted(now[(topic, p)][1]) == [1, 3]
        acked = traffic.producer.acked_count
        traffic.acked_since(acked)
        _broker_back_and_throttles_gone(kafka_cluster, admin, topic, plan, 2)
    finally:
        counts = traffic.finish()
    fault_row.update(counts, recover_s=round(recovered, 1), recovery="kill → the plan completed")
    with capsys.disabled():
        print(f"\nplan completed {recovered:.1f} s after broker 2 was killed; traffic: {counts}")
    assert counts["lost"] == 0 and counts["acked"] > 0
