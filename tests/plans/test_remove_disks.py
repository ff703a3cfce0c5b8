"""An operator asks to empty log dirs (remove-disks) on a synced model whose brokers
have several dirs: the plan names the dirs their replicas go to, keeps the dirs it
empties, and a request it cannot do is refused with a clear message."""

import pytest
from django.utils import timezone

from apps.clusters.services import cluster_state_apply
from apps.kafka_layer.kafka_python_adapter import BrokerLogDirs
from apps.kafka_layer.log_dirs_decode import LogDir
from apps.plans.errors import PlanRequestInvalid
from apps.plans.models import Plan, PlanMode
from apps.plans.services import plan_request
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
