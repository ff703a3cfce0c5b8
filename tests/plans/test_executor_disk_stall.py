"""A copy between the dirs of a broker (JBOD) that stops copying is a stalled move like
any other: after EXECUTOR_STALL_TIMEOUT it is sent back to its source dir (Kafka drops
the future replica), failed with the reason, and the plan ends failed."""

import pytest
from django.utils import timezone

from apps.plans.executor import execution_step
from apps.plans.models import MoveState, PlanState
from apps.plans.services import plan_approve, plan_create
from tests.plans.fakes import FakeKafka, run_to_end
from tests.support.factories import cluster_apply

pytestmark = pytest.mark.django_db

BEFORE = {("t", 0): [1, 2], ("t", 1): [2, 1]}
# Both partitions stay on their brokers; broker 1's replicas change dir.
ENTRIES = [
    {"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["/d/b", "any"]},
    {"topic": "t", "partition": 1, "replicas": [2, 1], "log_dirs": ["any", "/d/b"]},
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
    # Copies that never finish: the future replicas stay half copied.
    fake = FakeKafka(assignment={k: list(v) for k, v in BEFORE.items()}, ticks=1000)
    fake.sizes = {k: 1_000_000 for k in BEFORE}
    fake.replica_dirs = {(t, p, b): "/d/a" for (t, p), bs in BEFORE.items() for b in bs}
    return fake


def test_it_sends_a_stalled_dir_copy_back_and_fails_the_plan(plan, kafka, settings):
    settings.EXECUTOR_STALL_TIMEOUT = 60
    settings.EXECUTOR_DISK_MOVES_PER_BROKER = 5
    execution_step(plan=plan, kafka=kafka)
    execution_step(plan=plan, kafka=kafka)
    running = plan.moves.filter(state=MoveState.IN_PROGRESS)
    assert running.count() == 2 and set(kafka.dir_moves) == {("t", 0, 1), ("t", 1, 1)}
    assert all(m.progressed_at for m in running)  # the future replicas' bytes counted
    assert execution_step(plan=plan, kafka=kafka) is False  # quiet, but not for long yet
    sent = len(kafka.dir_alter_calls)

    running.update(progressed_at=timezone.now() - timezone.timedelta(seconds=90))
    run_to_end(plan, kafka, limit=10)

    assert plan.state == PlanState.FAILED and "no progress for 90 s" in plan.error
    back = {k: v for call in kafka.dir_alter_calls[sent:] for k, v in call.items()}
    assert back == {("t", 0, 1): "/d/a", ("t", 1, 1): "/d/a"}
    assert not kafka.dir_moves and set(kafka.replica_dirs.values()) == {"/d/a"}
    assert {m.state for m in plan.moves.all()} == {MoveState.FAILED}
    assert not kafka.throttles_left() and kafka.assignment == BEFORE


def test_a_dir_copy_that_copies_is_not_stalled(plan, kafka, settings):
    settings.EXECUTOR_STALL_TIMEOUT = 60
    kafka.ticks = 3
    execution_step(plan=plan, kafka=kafka)
    plan.moves.filter(state=MoveState.IN_PROGRESS).update(
        started_at=timezone.now() - timezone.timedelta(seconds=90)
    )
    run_to_end(plan, kafka, limit=10)

    assert plan.state == PlanState.COMPLETED, plan.error
    assert {d for (_, _, b), d in kafka.replica_dirs.items() if b == 1} == {"/d/b"}
