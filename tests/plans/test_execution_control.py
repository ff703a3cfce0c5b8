"""Operator control of a running execution against the in-memory Kafka: pause and
resume, throttle and move caps changed while it runs, the throttle chosen at
approval; each audited and refused to roles that may not control executions."""

import pytest

from apps.audit.models import AuditEvent
from apps.plans.errors import PlanPermissionDenied, PlanRequestInvalid, PlanStateError
from apps.plans.executor import execution_step
from apps.plans.models import Execution, MoveState, PlanState
from apps.plans.selectors import plan_actions_get, plan_progress
from apps.plans.services import (
    execution_pause,
    execution_resume,
    execution_tune,
    plan_approve,
)
from tests.plans import test_executor as executor_tests
from tests.plans.fakes import run_to_end
from tests.plans.test_executor import AFTER, BEFORE
from tests.support.factories import cluster_apply, plan_from_assignment

pytestmark = pytest.mark.django_db

# The executor tests' plan (12 moves onto broker 3, caps 5 / 8, 1 MB/s) and fake Kafka.
plan = executor_tests.plan
kafka = executor_tests.kafka

RATE_KEY = "follower.replication.throttled.rate"


def actions_of(of) -> list[str]:
    return list(
        AuditEvent.objects.filter(object_id=str(of.pk))
        .order_by("id")
        .values_list("action", flat=True)
    )


def test_it_sends_no_new_batch_while_paused_and_carries_on_when_resumed(plan, kafka, operator):
    execution_step(plan=plan, kafka=kafka)
    assert len(kafka.alter_calls) == 1
    execution_pause(plan=plan, user=operator, reason="peak traffic")

    for _ in range(5):
        assert execution_step(plan=plan, kafka=kafka) is False

    # The first batch finished in Kafka; nothing more was sent.
    assert len(kafka.alter_calls) == 1 and not kafka.in_flight
    assert plan.moves.filter(state=MoveState.PENDING).count() == 7
    assert plan_progress(plan=plan).paused
    assert plan_actions_get(user=operator, plan=plan).resume
    plan.refresh_from_db()
    assert plan.state == PlanState.EXECUTING

    execution_resume(plan=plan, user=operator)
    run_to_end(plan, kafka)

    plan.refresh_from_db()
    assert plan.state == PlanState.COMPLETED and kafka.assignment == AFTER
    assert {"execution.paused", "execution.resumed"} <= set(actions_of(plan))
    paused = AuditEvent.objects.get(action="execution.paused", object_id=str(plan.pk))
    assert paused.actor == operator.username and paused.reason == "peak traffic"


def test_it_applies_a_new_throttle_and_caps_to_a_running_plan(plan, kafka, approver):
    execution_step(plan=plan, kafka=kafka)
    assert kafka.broker_configs[3][RATE_KEY] == "1000000"

    execution_tune(
        plan=plan, user=approver, throttle_rate=5_000_000, max_moves_per_broker=1, reason="faster"
    )
    execution_step(plan=plan, kafka=kafka)

    assert {b: c[RATE_KEY] for b, c in kafka.broker_configs.items()} == {
        1: "5000000",
        2: "5000000",
        3: "5000000",
    }
    progress = plan_progress(plan=plan)
    assert progress.throttle_bytes_per_sec == 5_000_000 and progress.max_moves_per_broker == 1
    run_to_end(plan, kafka)
    # Every batch after the change moved one partition onto broker 3.
    assert all(len(call) == 1 for call in kafka.alter_calls[2:] if any(call.values()))
    assert not kafka.throttles_left()
    tuned = AuditEvent.objects.get(action="execution.tuned", object_id=str(plan.pk))
    assert {k: tuned.before[k] for k in ("throttle_rate", "max_moves_per_broker")} == {
        "throttle_rate": None,
        "max_moves_per_broker": None,
    }
    assert {k: tuned.after[k] for k in ("throttle_rate", "max_moves_per_broker")} == {
        "throttle_rate": 5_000_000,
        "max_moves_per_broker": 1,
    }
    # Re-estimated at the new throttle, in the same audit row.
    assert {"duration_estimate_seconds", "eta_seconds", "bytes_to_move"} <= set(tuned.after)
    changed = AuditEvent.objects.get(action="execution.throttle_changed", object_id=str(plan.pk))
    assert changed.before == {"rate": 1_000_000} and changed.after["rate"] == 5_000_000


def test_it_removes_the_throttle_when_tuned_to_none(plan, kafka, approver):
    execution_step(plan=plan, kafka=kafka)
    execution_tune(plan=plan, user=approver, throttle_rate=0)
    execution_step(plan=plan, kafka=kafka)
    assert not kafka.throttles_left()
    run_to_end(plan, kafka)
    assert kafka.assignment == AFTER and not kafka.throttles_left()


def test_it_throttles_at_the_rate_chosen_at_approval(orders_cluster, admin_member, kafka):
    cluster_apply(orders_cluster, BEFORE)
    proposed = plan_from_assignment(orders_cluster, AFTER, BEFORE, actor=admin_member)
    plan_approve(plan=proposed, user=admin_member, throttle_rate=3_000_000)
    execution_step(plan=proposed, kafka=kafka)
    assert kafka.broker_configs[3][RATE_KEY] == "3000000"
    assert "execution.tuned" in actions_of(proposed)


def test_it_refuses_control_to_viewers_and_bad_values(plan, viewer, operator):
    with pytest.raises(PlanPermissionDenied):
        execution_pause(plan=plan, user=viewer)
    with pytest.raises(PlanPermissionDenied):
        execution_tune(plan=plan, user=viewer, throttle_rate=1)
    with pytest.raises(PlanRequestInvalid):
        execution_tune(plan=plan, user=operator, throttle_rate=-1)
    with pytest.raises(PlanRequestInvalid):
        execution_tune(plan=plan, user=operator, max_moves_cluster=0)
    with pytest.raises(PlanStateError):
        execution_resume(plan=plan, user=operator)  # not paused
    assert not plan_actions_get(user=viewer, plan=plan).tune
    execution = Execution.objects.filter(plan=plan).first()
    assert execution is None or (not execution.paused and execution.throttle_rate is None)


def test_it_refuses_control_of_a_finished_plan(plan, kafka, operator):
    run_to_end(plan, kafka)
    plan.refresh_from_db()
    with pytest.raises(PlanStateError):
        execution_pause(plan=plan, user=operator)
    assert not plan_actions_get(user=operator, plan=plan).pause
