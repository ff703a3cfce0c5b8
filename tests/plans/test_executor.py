"""The executor against an in-memory Kafka: batches and caps, throttles, progress,
leader election, cancel, crash-and-resume, failures, lease."""

import pytest
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.plans.executor import execution_run, execution_step, executions_resume
from apps.plans.executor.lease import execution_lease_take
from apps.plans.kafka_ops import KafkaOpError, KafkaOpNotAuthorized
from apps.plans.models import Execution, MoveState, Plan, PlanMode, PlanOrigin, PlanState
from apps.plans.services import plan_approve, plan_cancel
from tests.plans.fakes import FakeKafka, run_to_end
from tests.support.factories import cluster_apply, plan_from_assignment, policy_set

pytestmark = pytest.mark.django_db

# 12 partitions on brokers 1 and 2; the plan moves one replica of each to broker 3.
BEFORE = {("t", i): [1, 2] if i % 2 else [2, 1] for i in range(12)}
AFTER = {("t", i): [3, 1] if i % 2 else [3, 2] for i in range(12)}


@pytest.fixture
def kafka() -> FakeKafka:
    return FakeKafka(
        assignment={k: list(v) for k, v in BEFORE.items()},
        sizes={k: 1000 for k in BEFORE},
        ticks=2,
    )


@pytest.fixture
def plan(orders_cluster, admin_member) -> Plan:
    cluster_apply(orders_cluster, BEFORE)
    policy_set(
        orders_cluster,
        admin_member,
        max_moves_per_broker=5,
        max_moves_cluster=8,
        throttle_bytes_per_sec=1_000_000,
    )
    plan = plan_from_assignment(orders_cluster, AFTER, BEFORE, actor=admin_member)
    plan_approve(plan=plan, user=admin_member)
    return plan


def test_it_runs_a_plan_in_capped_batches_with_throttles_and_leader_election(plan, kafka):
    execution_step(plan=plan, kafka=kafka)

    plan.refresh_from_db()
    assert plan.state == PlanState.EXECUTING and plan.started_at
    # Broker 3 receives every move: at most 5 at once, whatever the cluster cap (8).
    assert len(kafka.alter_calls) == 1 and len(kafka.alter_calls[0]) == 5
    # Throttles are set before the first batch, on every broker involved and the topic.
    brokers, topics = kafka.config_writes[0]
    assert sorted(brokers) == [1, 2, 3]
    assert brokers[3] == {
        "leader.replication.throttled.rate": "1000000",
        "follower.replication.throttled.rate": "1000000",
    }
    assert "0:2" in topics["t"]["leader.replication.throttled.replicas"]
    assert "0:3" in topics["t"]["follower.replication.throttled.replicas"]
    assert "0:1" not in topics["t"]["follower.replication.throttled.replicas"]
    assert kafka.throttles_left()

    run_to_end(plan, kafka)

    plan.refresh_from_db()
    assert plan.state == PlanState.COMPLETED and plan.finished_at
    assert kafka.assignment == AFTER
    assert kafka.max_in_flight_seen <= 5
    assert plan.moves.filter(state=MoveState.DONE).count() == 12
    assert set(plan.moves.values_list("submissions", flat=True)) == {1}
    assert plan.moves.values_list("batch", flat=True).distinct().count() >= 3
    assert not kafka.throttles_left()
    assert kafka.elect_calls and not kafka.elect_calls[-1][1]
    execution = Execution.objects.get(plan=plan)
    assert execution.bytes_total == 12 * 1000 and execution.bytes_done == execution.bytes_total
    assert execution.leaders_elected and not execution.throttle_applied
    audited = set(
        AuditEvent.objects.filter(object_id=str(plan.pk)).values_list("action", flat=True)
    )
    assert {
        "execution.started",
        "execution.throttle_set",
        "execution.batch_submitted",
        "execution.leaders_elected",
        "execution.throttle_removed",
        "execution.completed",
    } <= audited


def test_it_honours_the_cluster_wide_cap(plan, kafka, admin_member):
    policy_set(plan.cluster, admin_member, max_moves_cluster=2)
    run_to_end(plan, kafka)
    assert kafka.max_in_flight_seen <= 2
    assert all(len(call) <= 2 for call in kafka.alter_calls)


def test_it_reports_progress_in_bytes(plan, kafka):
    execution_step(plan=plan, kafka=kafka)
    execution_step(plan=plan, kafka=kafka)
    execution = Execution.objects.get(plan=plan)
    # Half of each in-flight copy is on broker 3 (fake sizes).
    running = plan.moves.filter(state=MoveState.IN_PROGRESS)
    assert running and all(m.bytes_done == 500 for m in running)
    assert 0 < execution.bytes_done < execution.bytes_total


def test_it_pushes_progress_to_the_live_plan_page(plan, kafka, monkeypatch):
    sent = []
    monkeypatch.setattr(
        "apps.dashboard.signals.execution_progress_send", lambda **kw: sent.append(kw)
    )
    run_to_end(plan, kafka)

    assert sent and {s["plan_id"] for s in sent} == {plan.pk}
    assert [s["bytes_done"] for s in sent] == sorted(s["bytes_done"] for s in sent)
    assert sent[-1]["done"] == sent[-1]["total"] == 12
    assert sent[-1]["bytes_done"] == Execution.objects.get(plan=plan).bytes_total


def test_it_runs_on_when_a_progress_listener_fails(plan, kafka, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("listener bug")

    monkeypatch.setattr("apps.dashboard.signals.execution_progress_send", broken)
    run_to_end(plan, kafka)

    plan.refresh_from_db()
    assert plan.state == PlanState.COMPLETED


def test_it_removes_only_what_it_set(plan, kafka):
    kafka.topic_configs["other-topic"] = {"leader.replication.throttled.replicas": "0:1"}
    kafka.broker_configs[4] = {"leader.replication.throttled.rate": "777"}
    run_to_end(plan, kafka)
    assert kafka.topic_configs == {"other-topic": {"leader.replication.throttled.replicas": "0:1"}}
    assert kafka.broker_configs == {4: {"leader.replication.throttled.rate": "777"}}


def test_it_retries_throttle_removal_of_a_finished_plan(plan, kafka):
    run_to_end(plan, kafka)
    # As if the removal had failed: the next step of the finished plan retries it.
    Execution.objects.filter(plan=plan).update(throttle_applied=True)
    kafka.broker_configs[3] = {"leader.replication.throttled.rate": "1000000"}
    assert execution_step(plan=plan, kafka=kafka) is True
    assert not kafka.throttles_left()
    assert not Execution.objects.get(plan=plan).throttle_applied


def test_it_cancels_in_flight_moves_sends_nothing_more_and_removes_throttles(plan, kafka, operator):
    execution_step(plan=plan, kafka=kafka)
    plan.refresh_from_db()
    plan_cancel(plan=plan, user=operator, reason="traffic peak")
    sent = len(kafka.alter_calls)

    assert execution_step(plan=plan, kafka=kafka) is True

    plan.refresh_from_db()
    assert plan.state == PlanState.CANCELLED
    cancels, reorders = kafka.alter_calls[sent:]
    assert cancels and all(v is None for v in cancels.values())
    assert reorders == {key: BEFORE[key] for key in cancels}
    assert not kafka.in_flight and not kafka.throttles_left()
    # Every partition is either untouched or fully moved: never half-way.
    for key, replicas in kafka.assignment.items():
        assert replicas in (BEFORE[key], AFTER[key])
    assert not plan.moves.filter(state__in=[MoveState.PENDING, MoveState.IN_PROGRESS]).exists()
    actions = list(
        AuditEvent.objects.filter(object_id=str(plan.pk)).values_list("action", flat=True)
    )
    assert "plan.cancel_requested" in actions and "execution.cancelled" in actions


def test_it_resends_a_batch_that_never_reached_kafka_and_nothing_else(plan, kafka):
    original = kafka.reassignments_alter
    calls = []

    def killed_on_second_batch(moves):
        calls.append(moves)
        if len(calls) == 2:
            # The worker dies after batch 2 is recorded, before Kafka hears of it.
            raise SystemExit("worker killed")
        return original(moves)

    kafka.reassignments_alter = killed_on_second_batch
    with pytest.raises(SystemExit):
        for _ in range(10):
            execution_step(plan=plan, kafka=kafka)
    kafka.reassignments_alter = original
    recorded_twice = set(
        plan.moves.filter(state=MoveState.IN_PROGRESS, batch=2).values_list("partition", flat=True)
    )
    assert recorded_twice and not any(("t", p) in kafka.in_flight for p in recorded_twice)

    run_to_end(plan, kafka)  # a new worker

    plan.refresh_from_db()
    assert plan.state == PlanState.COMPLETED and kafka.assignment == AFTER
    sent = [key for call in kafka.alter_calls for key, target in call.items() if target]
    assert sorted(sent) == sorted(AFTER)  # each partition reached Kafka exactly once
    submissions = dict(plan.moves.values_list("partition", "submissions"))
    assert {p for p, n in submissions.items() if n == 2} == recorded_twice and recorded_twice


def test_it_waits_for_lagging_metadata_instead_of_failing_a_move(plan, kafka):
    kafka.ticks = 0
    execution_step(plan=plan, kafka=kafka)
    lagging = next(iter(kafka.in_flight))
    kafka.stale_metadata[lagging] = AFTER[lagging] + [
        b for b in BEFORE[lagging] if b not in AFTER[lagging]
    ]
    execution_step(plan=plan, kafka=kafka)  # controller: done; broker: still the union
    move = plan.moves.get(topic=lagging[0], partition=lagging[1])
    assert move.state == MoveState.IN_PROGRESS
    del kafka.stale_metadata[lagging]
    run_to_end(plan, kafka)
    plan.refresh_from_db()
    assert plan.state == PlanState.COMPLETED
    assert set(plan.moves.values_list("submissions", flat=True)) == {1}


def test_it_carries_on_after_a_crash_with_moves_in_flight(plan, kafka):
    kafka.ticks = 3
    execution_step(plan=plan, kafka=kafka)
    in_flight = set(kafka.in_flight)
    assert in_flight
    # The worker dies here; a new one starts from the database and Kafka alone.
    run_to_end(plan, kafka)
    plan.refresh_from_db()
    assert plan.state == PlanState.COMPLETED
    sent = [key for call in kafka.alter_calls for key, target in call.items() if target]
    assert len(sent) == 12 and set(sent) == set(AFTER)


def test_it_fails_a_plan_kafka_refuses_and_still_removes_throttles(plan, kafka):
    kafka.refuse[("t", 0)] = "InvalidReplicaAssignmentError"
    run_to_end(plan, kafka)
    plan.refresh_from_db()
    assert plan.state == PlanState.FAILED and "InvalidReplicaAssignmentError" in plan.error
    assert not kafka.throttles_left() and not kafka.in_flight
    assert not plan.moves.filter(state__in=[MoveState.PENDING, MoveState.IN_PROGRESS]).exists()


def test_it_retries_kafka_errors_then_gives_up_cleanly(plan, kafka):
    kafka.fail_next = 3
    result = execution_run(plan=plan, kafka=kafka, poll_interval=0, sleep=lambda s: None)
    assert result.state == PlanState.COMPLETED

    other = Plan.objects.get(pk=plan.pk)
    assert Execution.objects.get(plan=other).consecutive_errors == 0


def test_it_fails_after_too_many_errors_in_a_row(plan, kafka):
    execution_step(plan=plan, kafka=kafka)
    kafka.fail_next = 10
    result = execution_run(plan=plan, kafka=kafka, poll_interval=0, sleep=lambda s: None)
    assert result.state == PlanState.FAILED and "Kafka kept failing" in result.error
    assert not kafka.in_flight and not kafka.throttles_left()


def test_it_fails_at_once_naming_the_missing_acl(plan, kafka, monkeypatch):
    execution_step(plan=plan, kafka=kafka)
    needed = "not authorized: the principal needs Alter on Cluster 'kafka-cluster'"

    def denied(moves):
        raise KafkaOpNotAuthorized(needed)

    monkeypatch.setattr(kafka, "reassignments_alter", denied)
    result = execution_run(plan=plan, kafka=kafka, poll_interval=0, sleep=lambda s: None)

    assert result.state == PlanState.FAILED and result.error == needed
    assert Execution.objects.get(plan=plan).consecutive_errors == 0  # no retries
    assert not kafka.throttles_left()


def test_it_marks_the_plan_stale_when_kafka_moved_on_before_start(plan, kafka):
    kafka.assignment[("t", 0)] = [1, 3]
    execution_step(plan=plan, kafka=kafka)
    plan.refresh_from_db()
    assert plan.state == PlanState.STALE and not kafka.alter_calls and not kafka.config_writes


def test_it_lets_only_one_worker_hold_the_lease(plan, kafka):
    assert execution_lease_take(plan=plan, owner="worker-a")
    assert not execution_lease_take(plan=plan, owner="worker-b")
    result = execution_run(plan=plan, kafka=kafka, poll_interval=0, sleep=lambda s: None)
    assert result.state == PlanState.APPROVED and not kafka.alter_calls  # b stood aside
    Execution.objects.filter(plan=plan).update(lease_until=timezone.now())  # a died
    result = execution_run(plan=plan, kafka=kafka, poll_interval=0, sleep=lambda s: None)
    assert result.state == PlanState.COMPLETED


def test_it_resumes_plans_whose_worker_is_gone(
    plan, kafka, django_capture_on_commit_callbacks, mocker=None
):
    from apps.plans import tasks

    sent = []
    original = tasks.plan_execute_task.delay
    tasks.plan_execute_task.delay = lambda plan_id: sent.append(plan_id)
    try:
        assert execution_lease_take(plan=plan, owner="alive-worker")
        with django_capture_on_commit_callbacks(execute=True):
            assert executions_resume() == []
        Execution.objects.filter(plan=plan).update(lease_until=timezone.now())
        with django_capture_on_commit_callbacks(execute=True):
            assert executions_resume() == [plan.pk]
    finally:
        tasks.plan_execute_task.delay = original
    assert sent == [plan.pk]


def test_it_elects_an_unclean_leader_only_for_confirmed_data_loss(orders_cluster, admin_member):
    cluster_apply(orders_cluster, {("t", 0): [1, 2], ("t", 1): [1, 2]}, alive=(3, 4))
    kafka = FakeKafka(assignment={("t", 0): [1, 2], ("t", 1): [1, 2]}, alive={3, 4})
    plan = plan_from_assignment(
        orders_cluster,
        {("t", 0): [3, 4]},
        {("t", 0): [1, 2]},
        actor=admin_member,
        mode=PlanMode.FIX_OFFLINE,
        data_loss_partitions=["t-0"],
    )
    plan_approve(plan=plan, user=admin_member, confirm_data_loss=True)
    kafka.ticks = 3
    kafka.leaders[("t", 0)] = None  # every replica dead: no leader
    execution_step(plan=plan, kafka=kafka)
    assert kafka.elect_calls == [([("t", 0)], True)]
    kafka.leaders[("t", 0)] = None  # the first election came too early
    execution_step(plan=plan, kafka=kafka)
    assert kafka.elect_calls[-1] == ([("t", 0)], True) and len(kafka.elect_calls) == 2
    run_to_end(plan, kafka)
    assert all(unclean for _, unclean in kafka.elect_calls[:2])
    plan.refresh_from_db()
    assert plan.state == PlanState.COMPLETED


def test_it_refuses_to_step_a_plan_that_is_not_approved(orders_cluster, operator, kafka):
    from apps.plans.services import plan_request

    plan = plan_request(cluster=orders_cluster, user=operator, mode="full")
    assert execution_step(plan=plan, kafka=kafka) is True
    plan.refresh_from_db()
    assert plan.state == PlanState.PROPOSED and not kafka.alter_calls


def test_it_surfaces_a_failing_kafka_as_kafka_op_error(plan, kafka):
    kafka.fail_next = 1
    with pytest.raises(KafkaOpError):
        execution_step(plan=plan, kafka=kafka)


# --- moves that can't finish: dead target broker, no progress -------------------------


def _age_dead_sightings(plan: Plan, seconds: float) -> None:
    """As if the dead brokers had been seen dead `seconds` earlier."""
    execution = Execution.objects.get(plan=plan)
    then = (timezone.now() - timezone.timedelta(seconds=seconds)).isoformat()
    execution.dead_brokers = dict.fromkeys(execution.dead_brokers, then)
    execution.save(update_fields=["dead_brokers"])


def test_it_cancels_moves_to_a_dead_target_after_the_grace_and_ends_the_plan_failed(
    plan, kafka, settings
):
    settings.EXECUTOR_DEAD_TARGET_GRACE = 20
    kafka.ticks = 1000  # nothing finishes on its own
    execution_step(plan=plan, kafka=kafka)
    sent = set(kafka.in_flight)
    assert len(sent) == 5
    kafka.alive = {1, 2}

    # Within the grace: a restarting broker is waited for.
    assert execution_step(plan=plan, kafka=kafka) is False
    assert set(Execution.objects.get(plan=plan).dead_brokers) == {"3"}
    assert set(kafka.in_flight) == sent

    _age_dead_sightings(plan, 21)
    assert execution_step(plan=plan, kafka=kafka) is True

    plan.refresh_from_db()
    assert plan.state == PlanState.FAILED and plan.finished_at
    assert "target broker 3 dead for 21 s" in plan.error
    # Cancelled in Kafka (no target), back to the original replicas, throttles gone.
    assert kafka.alter_calls[-1] == dict.fromkeys(sent)
    assert not kafka.in_flight and not kafka.topic_configs
    # The dead broker can't be reached; every live one is clean.
    assert set(kafka.broker_configs) == {3}
    assert all(kafka.assignment[k] == BEFORE[k] for k in sent)
    failed = plan.moves.filter(state=MoveState.FAILED)
    assert {m.key for m in failed} == sent
    assert all("cancelled in Kafka" in m.error for m in failed)
    assert plan.moves.filter(state=MoveState.CANCELLED).count() == 12 - 5
    actions = list(
        AuditEvent.objects.filter(object_id=str(plan.pk))
        .order_by("id")
        .values_list("action", flat=True)
    )
    assert actions[-3:] == [
        "execution.moves_failed",
        "execution.throttle_removed",
        "execution.failed",
    ]

    # Broker 3's rate outlives it; the resume sweep deletes it once the broker is back.
    assert Execution.objects.get(plan=plan).throttle_applied
    assert execution_step(plan=plan, kafka=kafka) is True
    assert set(kafka.broker_configs) == {3}
    kafka.alive = {1, 2, 3}
    assert plan.pk in executions_resume()
    execution_step(plan=plan, kafka=kafka)  # what the enqueued task does
    assert not kafka.throttles_left()
    assert not Execution.objects.get(plan=plan).throttle_applied


def test_it_waits_for_a_target_that_comes_back_within_the_grace(plan, kafka, settings):
    settings.EXECUTOR_DEAD_TARGET_GRACE = 20
    kafka.ticks = 3
    execution_step(plan=plan, kafka=kafka)
    kafka.alive = {1, 2}
    execution_step(plan=plan, kafka=kafka)
    kafka.alive = {1, 2, 3}
    execution_step(plan=plan, kafka=kafka)
    assert Execution.objects.get(plan=plan).dead_brokers == {}

    run_to_end(plan, kafka)
    plan.refresh_from_db()
    assert plan.state == PlanState.COMPLETED and kafka.assignment == AFTER


def test_it_lets_moves_that_can_finish_finish_when_another_target_dies(plan, kafka, settings):
    settings.EXECUTOR_DEAD_TARGET_GRACE = 0
    kafka.ticks = 3
    execution_step(plan=plan, kafka=kafka)
    sent = set(kafka.in_flight)
    # Broker 2 dies: moves onto [3, 2] can't finish, moves onto [3, 1] still can.
    kafka.alive = {1, 3}

    run_to_end(plan, kafka)

    plan.refresh_from_db()
    assert plan.state == PlanState.FAILED and "target broker 2 dead" in plan.error
    doomed = {k for k in sent if 2 in AFTER[k]}
    assert {m.key for m in plan.moves.filter(state=MoveState.FAILED)} == doomed
    assert {m.key for m in plan.moves.filter(state=MoveState.DONE)} == sent - doomed
    for key in sent:
        assert kafka.assignment[key] == (BEFORE[key] if key in doomed else AFTER[key])
    # Nothing was sent after the failure; every throttle is gone.
    assert {k for call in kafka.alter_calls for k, t in call.items() if t} == sent
    assert not kafka.in_flight and not kafka.topic_configs and set(kafka.broker_configs) == {2}


def test_it_cancels_a_move_that_makes_no_progress(plan, kafka, settings):
    settings.EXECUTOR_STALL_TIMEOUT = 60
    kafka.ticks = 1000
    execution_step(plan=plan, kafka=kafka)
    execution_step(plan=plan, kafka=kafka)  # half copied (the fake), then nothing more
    running = plan.moves.filter(state=MoveState.IN_PROGRESS)
    assert running.count() == 5 and all(m.progressed_at for m in running)
    assert execution_step(plan=plan, kafka=kafka) is False  # quiet, but not for long yet

    running.update(progressed_at=timezone.now() - timezone.timedelta(seconds=90))
    assert execution_step(plan=plan, kafka=kafka) is True

    plan.refresh_from_db()
    assert plan.state == PlanState.FAILED and "no progress for 90 s" in plan.error
    assert not kafka.in_flight and not kafka.throttles_left()


def test_it_rides_out_a_database_restart_and_sends_nothing_twice(plan, kafka, monkeypatch):
    from django.db import OperationalError

    from apps.plans.executor import runner

    real_step, calls = runner.execution_step, []

    def step_with_outage(**kwargs):
        calls.append(1)
        if len(calls) in (2, 3):  # the database restarts after the first batch was sent
            raise OperationalError("server closed the connection unexpectedly")
        return real_step(**kwargs)

    monkeypatch.setattr(runner, "execution_step", step_with_outage)
    result = execution_run(plan=plan, kafka=kafka, poll_interval=0, sleep=lambda s: None)

    assert result.state == PlanState.COMPLETED
    sent = [key for call in kafka.alter_calls for key, target in call.items() if target]
    assert sorted(sent) == sorted(AFTER) and Execution.objects.get(plan=plan).runs == 1


def test_it_leaves_a_dead_brokers_rate_to_the_plan_running_when_it_returns(plan, kafka, settings):
    settings.EXECUTOR_DEAD_TARGET_GRACE = 0
    kafka.ticks = 1000
    execution_step(plan=plan, kafka=kafka)
    kafka.alive = {1, 2}
    assert execution_step(plan=plan, kafka=kafka) is True  # failed; broker 3's rate left
    # Broker 3 is back and another plan now throttles it.
    kafka.alive = {1, 2, 3}
    other = Plan.objects.create(
        cluster=plan.cluster,
        origin=PlanOrigin.OPERATOR,
        mode=PlanMode.ADD_BROKERS,
        state=PlanState.EXECUTING,
        fingerprint="x",
        reassignment={"version": 1, "partitions": []},
        rollback_reassignment={"version": 1, "partitions": []},
    )
    Execution.objects.create(plan=other, throttle={"brokers": [3]}, throttle_applied=True)

    execution_step(plan=plan, kafka=kafka)  # the resume sweep's retry

    assert kafka.broker_configs[3]["follower.replication.throttled.rate"] == "1000000"
    assert not Execution.objects.get(plan=plan).throttle_applied
