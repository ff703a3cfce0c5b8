"""Progress of copies between the dirs of a broker (JBOD): each counts its future
replica's size so far, in the same figures as copies between brokers (the moves' bytes
done, the execution's, the plan page's progress), and its bytes are in the plan's total."""

import pytest
from rest_framework.test import APIClient

from apps.plans.executor import execution_step
from apps.plans.models import Execution, PlanMove, PlanState
from apps.plans.selectors import plan_progress
from apps.plans.services import plan_approve, plan_create
from tests.plans.fakes import FakeKafka, run_to_end
from tests.support.factories import cluster_apply

pytestmark = pytest.mark.django_db

BEFORE = {("t", 0): [1, 2], ("t", 1): [1, 2], ("t", 2): [2, 1]}
SIZES = {("t", 0): 1000, ("t", 1): 2000, ("t", 2): 4000}
ENTRIES = [
    # Broker 1's replica to /d/b: 1000 bytes between its dirs.
    {"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["/d/b", "any"]},
    # Both replicas to /d/b: 2 x 2000.
    {"topic": "t", "partition": 1, "replicas": [1, 2], "log_dirs": ["/d/b", "/d/b"]},
    # A new replica on broker 3 (4000 over the network), broker 1's where it is.
    {"topic": "t", "partition": 2, "replicas": [3, 1], "log_dirs": ["/d/b", "any"]},
]


@pytest.fixture
def kafka() -> FakeKafka:
    fake = FakeKafka(assignment={k: list(v) for k, v in BEFORE.items()}, ticks=4, sizes=SIZES)
    fake.replica_dirs = {(t, p, b): "/d/a" for (t, p), bs in BEFORE.items() for b in bs}
    return fake


@pytest.fixture
def plan(orders_cluster, admin_member, kafka, settings):
    settings.EXECUTOR_DISK_MOVES_PER_BROKER = 5
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


def test_it_counts_copies_between_dirs_in_the_plans_progress(plan, kafka):
    execution_step(plan=plan, kafka=kafka)

    moves = {m.partition: m for m in PlanMove.objects.filter(plan=plan)}
    assert [moves[p].bytes_dirs for p in (0, 1, 2)] == [1000, 4000, 0]
    # Half of each copy so far: the future replicas' sizes (the fake's), and half of the
    # new replica on broker 3.
    assert [moves[p].bytes_done for p in (0, 1, 2)] == [500, 2000, 2000]
    execution = Execution.objects.get(plan=plan)
    assert execution.bytes_total == 9000 and execution.bytes_done == 4500
    progress = plan_progress(plan=plan)
    assert (progress.bytes_done, progress.bytes_total) == (4500, 9000)
    assert progress.percent == pytest.approx(50.0)


def test_it_counts_a_finished_copy_between_dirs_whole(plan, kafka):
    run_to_end(plan, kafka)

    assert plan.state == PlanState.COMPLETED
    moves = {m.partition: m for m in PlanMove.objects.filter(plan=plan)}
    assert [moves[p].bytes_copied for p in (0, 1, 2)] == [1000, 4000, 4000]
    progress = plan_progress(plan=plan)
    assert progress.bytes_done == progress.bytes_total == 9000


def test_it_counts_no_copy_for_a_replica_named_in_the_dir_it_was_in():
    move = PlanMove(
        topic="t",
        partition=0,
        replicas_before=[1, 2],
        replicas_after=[3, 1],
        log_dirs_before=["/d/a", "/d/a"],
        log_dirs_after=["/d/b", "/d/a"],
    )
    assert move.dir_copies == {}
    move.log_dirs_after = ["/d/b", "/d/b"]
    assert move.dir_copies == {("t", 0, 1): "/d/b"}
    # A dir before not known: the broker may have to copy it.
    move.log_dirs_before = None
    move.log_dirs_after = ["/d/b", "/d/a"]
    assert move.dir_copies == {("t", 0, 1): "/d/a"}


def test_the_api_gives_each_moves_bytes_between_dirs(plan, kafka, admin_member):
    execution_step(plan=plan, kafka=kafka)  # the log sizes now
    api = APIClient()
    api.force_login(admin_member)

    moves = api.get(f"/api/plans/{plan.pk}/moves/").json()["results"]

    assert {m["partition"]: m["bytes_dirs"] for m in moves} == {0: 1000, 1: 4000, 2: 0}
