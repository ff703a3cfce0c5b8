"""The executor runs disk moves (JBOD) against the in-memory Kafka: dir targets before the
reassignment, re-sent for a new replica until its broker takes it, a move done only once
every replica is in its dir, and at most EXECUTOR_DISK_MOVES_PER_BROKER per broker."""

import pytest

from apps.plans.models import MoveState, PlanMove, PlanState
from apps.plans.services import plan_approve, plan_create
from tests.plans.fakes import FakeKafka, run_to_end
from tests.support.factories import cluster_apply

pytestmark = pytest.mark.django_db

BEFORE = {("t", 0): [1, 2], ("t", 1): [1, 2], ("t", 2): [2, 1]}
ENTRIES = [
    # Within brokers 1 and 2: replicas unchanged, dirs changed.
    {"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["/d/b", "any"]},
    {"topic": "t", "partition": 1, "replicas": [1, 2], "log_dirs": ["/d/b", "/d/b"]},
    # Onto broker 3, in a named dir.
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
    fake = FakeKafka(assignment={k: list(v) for k, v in BEFORE.items()}, ticks=2)
    fake.replica_dirs = {(t, p, b): "/d/a" for (t, p), bs in BEFORE.items() for b in bs}
    return fake


def test_it_moves_replicas_into_their_dirs_one_disk_move_per_broker(plan, kafka, settings):
    settings.EXECUTOR_DISK_MOVES_PER_BROKER = 1
    run_to_end(plan, kafka)

    assert plan.state == PlanState.COMPLETED
    assert set(PlanMove.objects.filter(plan=plan).values_list("state", flat=True)) == {
        MoveState.DONE
    }
    assert kafka.replica_dirs[("t", 0, 1)] == "/d/b"
    assert kafka.replica_dirs[("t", 1, 1)] == "/d/b"
    assert kafka.replica_dirs[("t", 1, 2)] == "/d/b"
    assert kafka.replica_dirs[("t", 2, 3)] == "/d/b"
    # The intra-broker moves were never sent as reassignments.
    sent = {key for call in kafka.alter_calls for key in call}
    assert sent == {("t", 2)}
    # Broker 3's dir was sent before its replica existed, then again until it took it.
    assert sum(("t", 2, 3) in call for call in kafka.dir_alter_calls) >= 2
    # Never two disk moves at once on broker 1: its two moves went in different batches.
    batches = dict(PlanMove.objects.filter(plan=plan).values_list("partition", "batch"))
    assert batches[0] != batches[1]


def test_it_sends_both_disk_moves_together_when_the_limit_allows(plan, kafka, settings):
    settings.EXECUTOR_DISK_MOVES_PER_BROKER = 2
    run_to_end(plan, kafka)
    batches = dict(PlanMove.objects.filter(plan=plan).values_list("partition", "batch"))
    assert batches[0] == batches[1] == batches[2] == 1


def test_it_throttles_disk_copies_while_they_run_and_removes_it(plan, kafka):
    run_to_end(plan, kafka)
    sets = [b for b, _t in kafka.config_writes if any(v for v in b.values())]
    assert sets and all(
        values.get("replica.alter.log.dirs.io.max.bytes.per.second") for values in sets[0].values()
    )
    assert not kafka.throttles_left()
    last_brokers, _topics = kafka.config_writes[-1]
    assert all(
        "replica.alter.log.dirs.io.max.bytes.per.second" in v and v[k] is None
        for v in last_brokers.values()
        for k in v
    )


def test_it_copies_between_dirs_on_one_broker_at_a_time_broker_by_broker(
    orders_cluster, admin_member, kafka, settings
):
    settings.EXECUTOR_DISK_MOVES_PER_BROKER = 5
    settings.EXECUTOR_DISK_BROKER_BY_BROKER = True
    cluster_apply(orders_cluster, BEFORE)
    entries = [
        {"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["/d/b", "any"]},
        {"topic": "t", "partition": 1, "replicas": [1, 2], "log_dirs": ["any", "/d/b"]},
        {"topic": "t", "partition": 2, "replicas": [2, 1], "log_dirs": ["any", "/d/b"]},
    ]
    plan = plan_create(
        cluster=orders_cluster,
        origin="operator",
        mode="full",
        reassignment={"version": 1, "partitions": entries},
        assignment_before=BEFORE,
        report={},
        actor=admin_member,
    )
    plan_approve(plan=plan, user=admin_member)
    run_to_end(plan, kafka)

    assert plan.state == PlanState.COMPLETED
    moves = {m.partition: m for m in PlanMove.objects.filter(plan=plan)}
    # Broker 1's two copies went together, broker 2's in another batch.
    assert moves[0].batch == moves[2].batch != moves[1].batch
