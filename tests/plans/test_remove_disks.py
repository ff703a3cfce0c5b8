"""An operator asks to empty log dirs (remove-disks) on a synced model whose brokers
have several dirs: the plan names the dirs their replicas go to, keeps the dirs it
empties, and a request it cannot do is refused with a clear message."""

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apps.clusters.services import cluster_state_apply
from apps.kafka_layer.kafka_python_adapter import BrokerLogDirs
from apps.kafka_layer.log_dirs_decode import LogDir
from apps.plans.errors import PlanRequestInvalid
from apps.plans.models import Plan, PlanMode, PlanState
from apps.plans.services import plan_approve, plan_request, plan_rollback_request
from tests.plans.fakes import FakeKafka, run_to_end
from tests.support.factories import cluster_state

pytestmark = pytest.mark.django_db

GIB = 2**30
# Every broker holds every partition; broker 1's replicas all sit in its dir /b.
EVERYWHERE = {("orders", i): [[1, 2, 3], [2, 3, 1], [3, 1, 2]][i % 3] for i in range(6)}


def _described(broker: int) -> BrokerLogDirs:
    dirs = (
        LogDir(f"/k{broker}/a", 0, 100 * GIB, 90 * GIB, 0),
        LogDir(f"/k{broker}/b", 0, 100 * GIB, 90 * GIB, 6),
    )
    # each replica: (index of its dir as listed, size)
    return BrokerLogDirs(dirs=dirs, sizes={key: GIB for key in EVERYWHERE})


@pytest.fixture
def jbod_cluster(orders_cluster):
    state = cluster_state(EVERYWHERE)
    answers = {b: _described(b) for b in (1, 2, 3)}
    cluster_state_apply(cluster=orders_cluster, state=state, now=timezone.now(), log_dirs=answers)
    return orders_cluster


def test_it_empties_a_dir_onto_the_brokers_other_dir(jbod_cluster, operator):
    plan = plan_request(cluster=jbod_cluster, user=operator, mode="remove-disks", disks=["1:/k1/b"])

    assert plan.mode == PlanMode.REMOVE_DISKS
    assert plan.disks == [[1, "/k1/b"]] and plan.brokers == [1]
    entries = plan.reassignment["partitions"]
    named = {
        (e["topic"], e["partition"]): dict(zip(e["replicas"], e["log_dirs"], strict=True))
        for e in entries
        if "log_dirs" in e
    }
    # every partition has a replica on broker 1 in /k1/b: each goes to /k1/a
    assert set(named) == set(EVERYWHERE)
    assert all(dirs[1] == "/k1/a" for dirs in named.values()), named
    assert all(d == "any" for dirs in named.values() for b, d in dirs.items() if b != 1)


@pytest.mark.parametrize(
    ("mode", "disks", "brokers", "message"),
    [
        ("remove-disks", [], [], "needs the log dirs to empty"),
        ("full", ["1:/k1/b"], [], "takes no log dirs"),
        ("remove-disks", ["1"], [], "is BROKER:DIR"),
        ("remove-disks", ["x:/k1/b"], [], "is BROKER:DIR"),
        ("remove-disks", ["1:/k1/b"], [2], "names its brokers in the dirs"),
        ("remove-disks", ["9:/k1/b"], [], "broker 9 is not part of cluster"),
        ("remove-disks", ["1:/nope"], [], "broker 1 has no log dir '/nope'"),
        ("remove-disks", ["1:/k1/a", "1:/k1/b"], [], "no online log dir left"),
    ],
)
def test_it_refuses_a_disk_removal_it_cannot_do(
    jbod_cluster, operator, mode, disks, brokers, message
):
    with pytest.raises(PlanRequestInvalid, match=message):
        plan_request(cluster=jbod_cluster, user=operator, mode=mode, disks=disks, brokers=brokers)
    assert not Plan.objects.exists()


def test_its_page_names_the_dirs_it_empties(jbod_cluster, operator, client):
    plan = plan_request(cluster=jbod_cluster, user=operator, mode="remove-disks", disks=["1:/k1/b"])
    client.force_login(operator)

    body = client.get(f"/clusters/{jbod_cluster.name}/plans/{plan.pk}/").content.decode()

    assert "remove disks (empty log dirs) (dirs 1:/k1/b)" in body


def test_its_rollback_puts_the_replicas_back_in_the_dir_they_left(jbod_cluster, operator, approver):
    plan = plan_request(cluster=jbod_cluster, user=operator, mode="remove-disks", disks=["1:/k1/b"])
    # each move keeps the dirs its replicas were in
    for move in plan.moves.all():
        assert move.log_dirs_before[move.replicas_before.index(1)] == "/k1/b"
    back = {
        (e["topic"], e["partition"]): dict(zip(e["replicas"], e["log_dirs"], strict=True))
        for e in plan.rollback_reassignment["partitions"]
    }
    assert set(back) == set(EVERYWHERE)
    assert all(dirs == {1: "/k1/b", **{b: "any" for b in dirs if b != 1}} for dirs in back.values())

    kafka = FakeKafka(
        assignment={k: list(v) for k, v in EVERYWHERE.items()},
        replica_dirs={(t, p, b): f"/k{b}/b" for (t, p), reps in EVERYWHERE.items() for b in reps},
    )
    plan_approve(plan=plan, user=approver)
    run_to_end(plan, kafka)
    assert plan.state == PlanState.COMPLETED
    assert {d for (_, _, b), d in kafka.replica_dirs.items() if b == 1} == {"/k1/a"}

    rollback = plan_rollback_request(plan=plan, user=operator)
    # the replica lists stay: the rollback is moves between dirs only, back to /k1/b
    assert {tuple(m.disk_targets.values()) for m in rollback.moves.all()} == {("/k1/b",)}
    plan_approve(plan=rollback, user=approver)
    run_to_end(rollback, kafka)
    assert rollback.state == PlanState.COMPLETED
    assert {d for (_, _, b), d in kafka.replica_dirs.items() if b == 1} == {"/k1/b"}


def test_the_api_gives_each_moves_dirs(jbod_cluster, operator):
    plan = plan_request(cluster=jbod_cluster, user=operator, mode="remove-disks", disks=["1:/k1/b"])
    api = APIClient()
    api.force_login(operator)

    moves = api.get(f"/api/plans/{plan.pk}/moves/").json()["results"]

    assert len(moves) == len(EVERYWHERE)
    for m in moves:
        at = m["replicas_after"].index(1)
        assert m["log_dirs_after"][at] == "/k1/a" and m["log_dirs_before"][at] == "/k1/b"


@pytest.mark.parametrize(
    ("disks", "message"),
    [
        (["1"], "is BROKER:DIR"),
        (["1:/nope"], "broker 1 has no log dir '/nope'"),
        ("1:/k1/b", "Expected a list"),
    ],
)
def test_the_api_refuses_malformed_dirs_with_a_400_and_changes_nothing(
    jbod_cluster, operator, disks, message
):
    api = APIClient()
    api.force_login(operator)

    response = api.post(
        f"/api/clusters/{jbod_cluster.name}/plans/",
        {"mode": "remove-disks", "disks": disks},
        format="json",
    )

    assert response.status_code == 400, response.content
    assert message in response.content.decode()
    assert not Plan.objects.exists()
