"""The sync keeps each broker's log dirs (JBOD) and the dir of every replica, packed per
topic beside its placement; log dirs it could not read leave the last known ones."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.clusters import services
from apps.clusters.models import Broker, ClusterRound, Topic
from apps.clusters.placement import placement_unpack
from apps.clusters.replica_dirs import replica_dirs_unpack
from apps.clusters.services import cluster_state_apply, cluster_sync
from apps.clusters.services import log_dirs_read as real_log_dirs_read  # conftest stubs it
from apps.kafka_layer import kafka_python_adapter
from apps.kafka_layer.kafka_python_adapter import BrokerLogDirs
from apps.kafka_layer.log_dirs_decode import LogDir
from tests.support.factories import SKEWED, cluster_state

pytestmark = pytest.mark.django_db

GIB = 2**30


def _described(broker: int, placed: dict[tuple[str, int], tuple[int, int]]) -> BrokerLogDirs:
    """Broker `broker` with dirs /b (listed first) and /a, an offline /c; `placed`:
    replica -> (index as listed, size)."""
    dirs = [
        LogDir(f"/k{broker}/b", 0, 100 * GIB, 60 * GIB, 0),
        LogDir(f"/k{broker}/a", 0, 200 * GIB, 150 * GIB, 0),
        LogDir(f"/k{broker}/c", 57, None, None, 0),
    ]
    sizes = {}  # each dir's replicas in a run, as decoded
    for listed in range(len(dirs)):
        mine = {k: v for k, v in placed.items() if v[0] == listed}
        dirs[listed] = dirs[listed]._replace(replicas=len(mine))
        sizes.update((key, size) for key, (_, size) in mine.items())
    return BrokerLogDirs(dirs=tuple(dirs), sizes=sizes)


def _answers() -> dict[int, BrokerLogDirs]:
    """Brokers 1 and 2 answer (3 does not): on each, orders-0 and audit-log-* in /b,
    the other orders partitions in /a."""
    answers = {}
    for broker in (1, 2):
        placed = {
            key: (0 if key[1] == 0 or key[0] == "audit-log" else 1, 1000 + key[1])
            for key, replicas in SKEWED.items()
            if broker in replicas
        }
        answers[broker] = _described(broker, placed)
    return answers


def _replica_dirs(topic: str) -> dict[int, list[int]]:
    row = Topic.objects.get(name=topic)
    placed = list(placement_unpack(packed=row.placement))
    dirs = replica_dirs_unpack(
        packed=row.replica_dirs, replica_counts=[len(r) for _, _, r, _ in placed]
    )
    return None if dirs is None else {p[0]: d for p, d in zip(placed, dirs, strict=True)}


def test_it_stores_each_brokers_log_dirs_sorted_by_path(empty_cluster):
    cluster_state_apply(
        cluster=empty_cluster, state=cluster_state(SKEWED), now=timezone.now(), log_dirs=_answers()
    )

    one = Broker.objects.get(cluster=empty_cluster, node_id=1)
    # Broker 1 holds orders-0..5 and audit-log-0/1; /a has orders-1..5.
    assert one.log_dirs == [
        {"path": "/k1/a", "total": 200 * GIB, "usable": 150 * GIB, "online": True, "used": 5015},
        {"path": "/k1/b", "total": 100 * GIB, "usable": 60 * GIB, "online": True, "used": 3001},
        {"path": "/k1/c", "total": None, "usable": None, "online": False, "used": 0},
    ]
    assert Broker.objects.get(cluster=empty_cluster, node_id=3).log_dirs is None


def test_it_stores_the_dir_of_each_replica_aligned_with_the_placement(empty_cluster):
    cluster_state_apply(
        cluster=empty_cluster, state=cluster_state(SKEWED), now=timezone.now(), log_dirs=_answers()
    )

    # Indexes into the broker's dirs sorted by path: 0 is /a, 1 is /b; -1: broker 3
    # did not answer.
    assert _replica_dirs("orders") == {
        0: [1, 1],  # [1, 2]
        1: [0, 0],  # [2, 1]
        2: [0, 0],
        3: [0, 0],
        4: [0, 0],
        5: [0, 0],
    }
    assert _replica_dirs("audit-log") == {0: [1, -1], 1: [-1, 1]}


def test_it_forgets_the_replica_dirs_of_a_changed_topic_when_log_dirs_are_unknown(
    empty_cluster,
):
    now = timezone.now()
    cluster_state_apply(
        cluster=empty_cluster, state=cluster_state(SKEWED), now=now, log_dirs=_answers()
    )
    moved = {**SKEWED, ("orders", 0): [1, 2, 3]}

    cluster_state_apply(cluster=empty_cluster, state=cluster_state(moved), now=now)

    assert _replica_dirs("orders") is None
    assert _replica_dirs("audit-log") == {0: [1, -1], 1: [-1, 1]}
    assert Broker.objects.get(cluster=empty_cluster, node_id=1).log_dirs[0]["path"] == "/k1/a"


def test_it_says_the_round_went_without_log_dirs(empty_cluster, monkeypatch):
    monkeypatch.setattr(services, "cluster_state_read", lambda **_: cluster_state(SKEWED))
    monkeypatch.setattr(
        services, "log_dirs_read", lambda *, cluster: (None, "log dirs unknown: timed out")
    )

    assert cluster_sync(cluster=empty_cluster, admin=object())

    row = ClusterRound.objects.get(cluster=empty_cluster, kind=ClusterRound.SYNC)
    assert row.last_degraded == "log dirs unknown: timed out"
    assert _replica_dirs("orders") is None

    monkeypatch.setattr(services, "log_dirs_read", lambda *, cluster: (_answers(), ""))
    assert cluster_sync(cluster=empty_cluster, admin=object())

    row.refresh_from_db()
    assert row.last_degraded == ""
    assert _replica_dirs("orders")[1] == [0, 0]


def test_it_puts_the_disks_in_the_snapshot_the_planner_reads(empty_cluster):
    from apps.balancer.engine import parse_snapshot
    from apps.metrics.selectors.snapshot import cluster_snapshot_build

    cluster_state_apply(
        cluster=empty_cluster, state=cluster_state(SKEWED), now=timezone.now(), log_dirs=_answers()
    )

    snapshot = cluster_snapshot_build(cluster=empty_cluster)

    data = snapshot.as_json()
    one, _, three = data["brokers"]
    assert one["log_dirs"] == [
        {"path": "/k1/a", "total": 200 * GIB, "usable": 150 * GIB, "online": True},
        {"path": "/k1/b", "total": 100 * GIB, "usable": 60 * GIB, "online": True},
        {"path": "/k1/c", "total": None, "usable": None, "online": False},
    ]
    assert "log_dirs" not in three  # never read
    by_key = {(p["topic"], p["partition"]): p for p in data["partitions"]}
    assert by_key[("orders", 0)]["log_dirs"] == ["/k1/b", "/k2/b"]
    assert by_key[("audit-log", 1)]["log_dirs"] == [None, "/k1/b"]  # [3, 1]
    parsed = parse_snapshot(data)
    assert parsed.log_dirs[0] == ["/k1/a", "/k1/b", "/k1/c"]
    assert parsed.partition_name(2) == "orders-0"  # after audit-log-0 and -1
    assert parsed.replica_dir[2].tolist() == [1, 1]


def test_it_leaves_the_disks_out_of_the_snapshot_when_never_read(cluster):
    from apps.metrics.selectors.snapshot import cluster_snapshot_build

    data = cluster_snapshot_build(cluster=cluster).as_json()

    assert not any("log_dirs" in b for b in data["brokers"])
    assert not any("log_dirs" in p for p in data["partitions"])


def test_it_packs_again_only_what_may_have_changed_while_the_layout_stays(
    empty_cluster, django_capture_on_commit_callbacks
):
    def apply(assignment):
        with django_capture_on_commit_callbacks(execute=True):
            cluster_state_apply(
                cluster=empty_cluster,
                state=cluster_state(assignment),
                now=timezone.now(),
                log_dirs=_answers(),
            )

    apply(SKEWED)
    # Values the sync would not write: kept while nothing says the topic changed.
    Topic.objects.filter(name="audit-log").update(replica_dirs=b"\x07\x00" * 4)
    Topic.objects.filter(name="orders").update(replica_dirs=b"\x07\x00" * 12)
    swapped = {**SKEWED, ("orders", 0): [2, 1]}  # same replicas per broker, new order

    apply(swapped)

    assert _replica_dirs("orders")[0] == [1, 1]  # its placement changed: packed again
    assert _replica_dirs("orders")[1] == [0, 0]
    assert _replica_dirs("audit-log") == {0: [7, 7], 1: [7, 7]}
    Topic.objects.filter(name="audit-log").update(replica_dirs=None)

    apply(swapped)

    assert _replica_dirs("audit-log") == {0: [1, -1], 1: [-1, 1]}  # unknown: packed


def test_it_says_which_acl_the_log_dirs_need_when_refused(empty_cluster, monkeypatch):
    from kafka.errors import ClusterAuthorizationFailedError

    def refuse(**_):
        raise ClusterAuthorizationFailedError("DescribeLogDirs on broker 1")

    monkeypatch.setattr(kafka_python_adapter, "log_dirs_describe", refuse)

    log_dirs, why = real_log_dirs_read(cluster=empty_cluster)

    assert log_dirs is None
    assert why.startswith("not authorized: the principal needs Describe on Cluster")
    assert "DescribeLogDirs" in why
