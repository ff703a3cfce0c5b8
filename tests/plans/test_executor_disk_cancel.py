"""Cancel and pause cover copies between the dirs of a broker (JBOD): a cancel sends each
copy not done back to its source dir (Kafka drops the future replica) and removes the
disk throttle with the replication ones; a pause sends no new dir target."""

import pytest

from apps.audit.models import AuditEvent
from apps.plans.executor import execution_step
from apps.plans.executor.endings import execution_fail
from apps.plans.kafka_ops import KafkaOpError
from apps.plans.models import MoveState, PlanMove, PlanState
from apps.plans.services import (
    execution_pause,
    execution_resume,
    plan_approve,
    plan_cancel,
    plan_create,
)
from tests.plans.fakes import FakeKafka, run_to_end
from tests.support.factories import cluster_apply

pytestmark = pytest.mark.django_db

DISK_THROTTLE = "replica.alter.log.dirs.io.max.bytes.per.second"
BEFORE = {("t", 0): [1, 2], ("t", 1): [1, 2], ("t", 2): [2, 1]}
ENTRIES = [
    {"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["/d/b", "any"]},
    {"topic": "t", "partition": 1, "replicas": [1, 2], "log_dirs": ["/d/b", "/d/b"]},
    {"topic": "t", "partition": 2, "replicas": [3, 1], "log_dirs": ["/d/b", "any"]},
]


@pytest.fixture
def plan(orders_cluster, admin_member):
    cluster_apply(orders_cluster, BEFORE)
    plan = plan_create(
        cluster=orders_cluster,
        origin="operator",
        mode="full",
        reassignment={"version": 1, "partitions": ENTRIES},
        assignment_before=BEFORE,
        report={},
        actor=admin_member,
    )
    plan_approve(plan=plan, user=admin_member)
    return plan


@pytest.fixture
def kafka() -> FakeKafka:
    # Copies slow enough to be cancelled or paused half-way.
    fake = FakeKafka(assignment={k: list(v) for k, v in BEFORE.items()}, ticks=6)
    fake.replica_dirs = {(t, p, b): "/d/a" for (t, p), bs in BEFORE.items() for b in bs}
    return fake


def test_it_sends_copies_not_done_back_to_their_dir_on_cancel(plan, kafka, admin_member, settings):
    settings.EXECUTOR_DISK_MOVES_PER_BROKER = 5
    execution_step(plan=plan, kafka=kafka)
    copying = set(kafka.dir_moves)
    assert ("t", 0, 1) in copying and ("t", 1, 2) in copying
    assert any(DISK_THROTTLE in v for v in kafka.broker_configs.values())
    plan_cancel(plan=plan, user=admin_member, reason="peak")
    sent = len(kafka.dir_alter_calls)

    assert execution_step(plan=plan, kafka=kafka) is True

    plan.refresh_from_db()
    assert plan.state == PlanState.CANCELLED
    back = {k: v for call in kafka.dir_alter_calls[sent:] for k, v in call.items()}
    # Every replica that was copying on a broker it stays on, back to its dir.
    assert back == {r: "/d/a" for r in copying if r[2] != 3}
    # No copy left running, every replica where it was, no throttle left.
    assert not kafka.dir_moves
    assert set(kafka.replica_dirs.values()) == {"/d/a"}
    assert not kafka.throttles_left() and not kafka.in_flight
    assert kafka.assignment == BEFORE
    event = AuditEvent.objects.filter(
        object_id=str(plan.pk), action="execution.reassignments_cancelled"
    ).get()
    assert event.after["dirs_reverted"]["t-0@1"] == "/d/a"


def test_it_leaves_a_copy_already_done_where_it_went_on_cancel(plan, kafka, admin_member):
    kafka.ticks = 1
    execution_step(plan=plan, kafka=kafka)
    kafka.replica_log_dirs()  # the copies land
    landed = {r for r, d in kafka.replica_dirs.items() if d == "/d/b"}
    assert landed
    plan_cancel(plan=plan, user=admin_member, reason="peak")
    sent = len(kafka.dir_alter_calls)

    execution_step(plan=plan, kafka=kafka)

    assert not any(r in landed for call in kafka.dir_alter_calls[sent:] for r in call)
    assert all(kafka.replica_dirs[r] == "/d/b" for r in landed)


def test_it_sends_no_new_dir_target_while_paused(plan, kafka, admin_member, settings):
    settings.EXECUTOR_DISK_MOVES_PER_BROKER = 1
    execution_step(plan=plan, kafka=kafka)
    first = {m.partition for m in PlanMove.objects.filter(plan=plan, batch=1)}
    held = {m for m in PlanMove.objects.filter(plan=plan, state=MoveState.PENDING)}
    assert held
    execution_pause(plan=plan, user=admin_member, reason="peak")
    sent = len(kafka.dir_alter_calls)

    for _ in range(12):
        execution_step(plan=plan, kafka=kafka)

    later = {r[1] for call in kafka.dir_alter_calls[sent:] for r in call}
    assert later <= first
    assert all(PlanMove.objects.get(pk=m.pk).state == MoveState.PENDING for m in held)
    assert not any(r[1] in {m.partition for m in held} for r in kafka.dir_moves)

    execution_resume(plan=plan, user=admin_member)
    run_to_end(plan, kafka)
    assert plan.state == PlanState.COMPLETED


def test_it_sends_copies_back_when_it_gives_up_on_the_plan(plan, kafka, settings):
    settings.EXECUTOR_DISK_MOVES_PER_BROKER = 5
    execution_step(plan=plan, kafka=kafka)
    assert kafka.dir_moves

    execution_fail(plan=plan, error="Kafka kept failing", kafka=kafka)

    plan.refresh_from_db()
    assert plan.state == PlanState.FAILED
    assert not kafka.dir_moves and not kafka.throttles_left()


def test_it_still_cancels_the_reassignments_when_the_dirs_cannot_be_read(
    plan, kafka, settings, monkeypatch
):
    settings.EXECUTOR_DISK_MOVES_PER_BROKER = 5
    execution_step(plan=plan, kafka=kafka)
    assert kafka.in_flight

    def unreadable():
        raise KafkaOpError("DescribeLogDirs: broker not available")

    monkeypatch.setattr(kafka, "replica_log_dirs", unreadable)
    execution_fail(plan=plan, error="Kafka kept failing", kafka=kafka)

    plan.refresh_from_db()
    assert plan.state == PlanState.FAILED
    assert not kafka.in_flight and not kafka.throttles_left()
