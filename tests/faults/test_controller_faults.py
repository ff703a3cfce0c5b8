"""The active KRaft controller SIGKILLed mid-execution, on the three-controller dev
cluster (`kafka_quorum_cluster`, its own run dir and ports), with acks=all traffic
alongside: another controller takes over, the plan runs to its end and clients never
notice (a new topic is created through the new controller and read back).

This is also the dev cluster's quorum test (it was tests/devcluster/
test_controller_quorum.py): one scenario, so the suite starts the three-controller
cluster once."""

import time

import pytest
from devkit import live
from devkit.polling import wait_until

from apps.kafka_layer.clients import admin_client_create
from apps.plans.executor import execution_run
from apps.plans.models import PlanState
from tests.faults.scenario import PLACEMENT, TARGETS, plan_onto_broker_3, step_until_copying
from tests.faults.traffic import Traffic
from tests.support.kafka_io import round_trip

pytestmark = [pytest.mark.django_db, pytest.mark.integration, pytest.mark.own_stack]


def test_it_elects_a_new_controller_and_finishes_the_plan_when_the_active_one_dies(
    kafka_quorum_cluster, admin_user, fault_row, fault_survived
):
    fault_row["fault"] = "active controller SIGKILLed mid-execution"
    quorum = kafka_quorum_cluster
    bootstrap = quorum.bootstrap_servers
    admin = admin_client_create(bootstrap_servers=bootstrap)
    topics: list[str] = []
    assert quorum.controller_ids == [100, 101, 102]
    old = quorum.wait_for_active_controller(timeout=60)
    try:
        topic, _, plan = plan_onto_broker_3(quorum, admin, topics, admin_user)
        traffic = Traffic.start(bootstrap, topic, len(PLACEMENT))
        try:
            step_until_copying(plan)
            killed = time.time()
            quorum.stop_controller(old, kill=True)
            assert quorum.node_pid(old) is None
            new = quorum.wait_for_active_controller(timeout=60, not_in={old})
            took_over = time.time() - killed
            assert new in {100, 101, 102} - {old}

            plan = execution_run(plan=plan, poll_interval=0.5, max_seconds=150)
            assert plan.state == PlanState.COMPLETED, plan.error
            recovered = plan.finished_at.timestamp() - killed
            assert not live.in_flight(bootstrap, [topic])
            now = wait_until(
                lambda: (
                    all(
                        sorted(isr) == sorted(r)
                        for r, isr, _ in live.placement(admin, [topic]).values()
                    )
                    and live.placement(admin, [topic])
                ),
                60,
                what="every replica in sync",
            )
            for p, replicas in TARGETS.items():
                assert now[(topic, p)][0] == replicas
            live.no_throttles_left(admin, [topic])
            acked = traffic.producer.acked_count
            traffic.acked_since(acked)
            # Topic creation goes through the new controller; produce/consume through
            # the brokers, all three still registered.
            assert round_trip(bootstrap) == [f"k{i}" for i in range(20)]
            assert quorum.metadata_brokers() == {1, 2, 3}
        finally:
            counts = traffic.finish()
    finally:
        if quorum.node_pid(old) is None:
            quorum.start_controller(old)
        live.leftovers_clean(bootstrap, topics)
        live.topics_delete(admin, topics)
    assert quorum.running_controllers() == {100, 101, 102}
    fault_survived(
        counts,
        recovered=recovered,
        recovery=f"kill → the plan completed (controller {new} active {took_over:.1f} s after)",
        said=f"controller {old} killed; {new} active after {took_over:.1f} s; plan completed "
        f"{recovered:.1f} s after the kill",
    )
