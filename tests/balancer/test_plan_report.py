"""Plan format, net difference, report contents, determinism and engine purity."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from devkit.jbod_snapshot import dirs_add

from apps.balancer.engine import PlannerOptions, propose, validate_plan
from apps.balancer.engine.disks import DiskModel
from apps.balancer.engine.model import ClusterModel
from apps.balancer.engine.modes import setup_mode
from apps.balancer.engine.plan import changed_partitions, listed_partitions
from apps.balancer.engine.report import kept_lists, leader_ends
from apps.balancer.engine.snapshot import parse_snapshot
from bench.bench_planner import make_cluster
from tests.support.factories import MiB, broker, broker_loads, part, snapshot

ENGINE = Path(__file__).resolve().parents[2] / "apps" / "balancer" / "engine"


def report_snapshot() -> dict:
    return snapshot(
        [
            broker(b, f"r{b % 3}", network_in=100 * MiB, network_out=200 * MiB, disk=1e12)
            for b in range(1, 7)
        ],
        [
            part(
                f"topic-{t}",
                i,
                [1 + (i + t) % 2, 3 + i % 2, 5],
                bytes_in=(t + 1) * 100_000.0,
                bytes_out=50_000.0 * i,
                size=1e8 * (1 + i % 4),
            )
            for t in range(3)
            for i in range(10)
        ],
    )


def test_it_writes_exactly_the_reassignment_json() -> None:
    snap = report_snapshot()
    pr = propose(snap)
    assert set(pr.plan) == {"version", "partitions"} and pr.plan["version"] == 1
    assert pr.plan["partitions"], "the cluster is skewed: something must move"
    for e in pr.plan["partitions"]:
        assert set(e) == {"topic", "partition", "replicas"}
    assert validate_plan(pr.plan, snap) == []
    json.dumps(pr.plan)  # plain JSON types only


def test_it_lists_only_changed_partitions_and_nets_out_round_trips() -> None:
    snap = snapshot([broker(1), broker(2)], [part("t", 0, [1]), part("t", 1, [2])])
    pr = propose(snap)
    assert pr.plan["partitions"] == []
    assert pr.report["movement"]["replica_moves"] == 0


def test_it_gives_the_same_plan_for_the_same_input() -> None:
    snap = report_snapshot()
    a = propose(snap, options=PlannerOptions(balance_threshold=1.02))
    b = propose(json.loads(json.dumps(snap)), options=PlannerOptions(balance_threshold=1.02))
    shuffled = {
        **snap,
        "partitions": list(reversed(snap["partitions"])),
        "brokers": list(reversed(snap["brokers"])),
    }
    c = propose(shuffled, options=PlannerOptions(balance_threshold=1.02))
    assert a.plan == b.plan == c.plan


def test_it_reports_figures_movement_goals_and_time() -> None:
    snap = report_snapshot()
    pr = propose(snap)
    r = pr.report
    for resource in ("network_in", "network_out", "disk", "replicas", "leaders"):
        fig = r["balance"][resource]
        assert fig["after"] >= fig["lower_bound"] - 1e-9
        assert {"before", "after", "lower_bound"} <= set(fig)
    assert r["balance"]["network_in"]["after"] < r["balance"]["network_in"]["before"]
    assert set(r["movement"]) == {
        "partitions_changed",
        "replica_moves",
        "bytes_moved",
        "leadership_moves",
        "given_back",
        "polish_moves",
    }
    assert len(r["moves"]) == len(pr.plan["partitions"]) == r["movement"]["partitions_changed"]
    for m in r["moves"]:
        assert m["goals"], m  # every change names the goal behind it
    assert [g["name"] for g in r["goals"]][:6] == [
        "dead-brokers",
        "rack-awareness",
        "max-replicas",
        "disk-capacity",
        "network-in-capacity",
        "network-out-capacity",
    ]
    assert r["seconds"]["total"] > 0
    json.dumps(r)


def test_it_reports_movement_consistent_with_the_plan() -> None:
    snap = report_snapshot()
    pr = propose(snap)
    before = {(p["topic"], p["partition"]): p for p in snap["partitions"]}
    added = moved_bytes = leaders = 0
    for e in pr.plan["partitions"]:
        old = before[(e["topic"], e["partition"])]
        new_reps = [b for b in e["replicas"] if b not in old["replicas"]]
        added += len(new_reps)
        moved_bytes += len(new_reps) * old["load"]["size"]
        leaders += e["replicas"][0] != old["replicas"][0] and e["replicas"][0] in old["replicas"]
    m = pr.report["movement"]
    assert (m["replica_moves"], m["bytes_moved"], m["leadership_moves"]) == (
        added,
        round(moved_bytes),
        leaders,
    )


def test_it_computes_the_load_model_of_the_contract() -> None:
    # network out of a leader = bytes_out + bytes_in x (rf - 1)
    snap = snapshot(
        [broker(1), broker(2), broker(3)],
        [part("t", 0, [1, 2, 3], bytes_in=10.0, bytes_out=7.0, size=5.0)],
    )
    loads = broker_loads(snap)
    assert loads[1]["network_out"] == 27.0 and loads[2]["network_out"] == 0.0
    pr = propose(snap, options=PlannerOptions(goals=()))
    assert pr.report["balance"]["network_out"]["before"] == 3.0  # 27 / (27 / 3)
    assert pr.report["balance"]["network_out"]["lower_bound"] == 3.0  # one leader only


def test_it_never_imports_django_in_the_engine() -> None:
    for path in ENGINE.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not any(n.split(".")[0] == "django" for n in names), path
    code = (
        "import sys, apps.balancer.engine as e; "
        "e.propose({'brokers': [{'id': 1}], 'partitions': []}); "
        "print(any(m.split('.')[0] == 'django' for m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ENGINE.parents[2],
    )
    assert out.stdout.strip() == "False"


def test_it_plans_the_net_difference_of_all_moves() -> None:
    from apps.balancer.engine.model import ClusterModel
    from apps.balancer.engine.modes import setup_mode
    from apps.balancer.engine.plan import build_plan
    from apps.balancer.engine.snapshot import parse_snapshot

    snap = parse_snapshot(
        snapshot([broker(1), broker(2), broker(3)], [part("t", 0, [1, 2]), part("t", 1, [3])])
    )
    model = ClusterModel(
        snap, setup_mode(snap, "full"), capacity_threshold=0.8, max_replicas_per_broker=10
    )
    model.move_replica(0, 1, 2, "test")  # 2 -> 3
    model.move_replica(0, 1, 1, "test")  # 3 -> 2: back where it was
    model.move_leader(0, 1, "test")  # leader 1 -> 2
    model.move_leader(0, 1, "test")  # and back
    assert build_plan(snap, model.assign, model.usable) == {"version": 1, "partitions": []}
    model.move_replica(1, 0, 0, "test")  # t-1: 3 -> 1
    plan = build_plan(snap, model.assign, model.usable)
    assert plan["partitions"] == [{"topic": "t", "partition": 1, "replicas": [1]}]


def test_changed_partitions_compare_whole_lists_order_included() -> None:
    initial = np.array([[0, 1, -1], [1, 2, 0], [2, 0, 1], [0, 2, -1]])
    final = np.array([[0, 1, -1], [2, 1, 0], [2, 0, 1], [0, 1, -1]])
    assert changed_partitions(initial, final).tolist() == [1, 3]


def test_listed_partitions_add_those_moved_between_dirs_in_order() -> None:
    changed = np.array([1, 3])
    moved_dir = np.array([[False, False], [False, False], [False, True], [True, False]])
    assert listed_partitions(changed).tolist() == [1, 3]
    assert listed_partitions(changed, moved_dir).tolist() == [1, 2, 3]


def test_listed_partitions_are_the_union_of_changed_and_moved_between_dirs() -> None:
    rng = np.random.default_rng(5)
    for _ in range(50):
        n = int(rng.integers(1, 60))
        changed = np.flatnonzero(rng.random(n) < 0.3)
        moved_dir = rng.random((n, 3)) < 0.1
        want = np.union1d(changed, np.flatnonzero(moved_dir.any(axis=1)))
        got = listed_partitions(changed, moved_dir)
        assert got.tolist() == want.tolist()
        assert got.dtype == want.dtype


def test_leader_ends_are_the_distinct_pairs_of_numpy_unique() -> None:
    rng = np.random.default_rng(6)
    for top in (1, 3, 1000, 1 << 40):  # the last: past the one-key form
        for n in (0, 1, 7, 200):
            old = rng.integers(0, top + 1, n)
            new = np.where(rng.random(n) < 0.5, old, rng.integers(0, top + 1, n))
            ends, which = leader_ends(old, new)
            if n == 0:
                assert ends == [] and which.shape == (0,)
                continue
            want, inverse = np.unique(np.stack([old, new], axis=1), axis=0, return_inverse=True)
            assert ends == want.tolist()
            assert which.tolist() == inverse.ravel().tolist()


def test_kept_lists_are_each_rows_kept_values_one_list_per_content() -> None:
    rng = np.random.default_rng(7)
    for top in (0, 2, 1000, 1 << 40):  # the last: past the one-key form
        for n, width in ((0, 3), (1, 1), (9, 2), (300, 3), (300, 6)):
            values = rng.integers(0, top + 1, (n, width))
            keep = rng.random((n, width)) < 0.6
            got = kept_lists(values, keep)
            want = [
                [int(v) for v, k in zip(row, ks, strict=True) if k]
                for row, ks in zip(values, keep, strict=True)
            ]
            assert got == want
            assert all(type(v) is int for row in got for v in row)
            first: dict[tuple[int, ...], list[int]] = {}
            for row in got:  # equal content, one list
                assert first.setdefault(tuple(row), row) is row


def test_it_lists_each_replica_and_dir_of_a_partition_once_replica_counts_differ() -> None:
    snap = dirs_add(make_cluster(12, 600, seed=2), dirs=3, skew=0.5, seed=2)
    for i, p in enumerate(snap["partitions"]):
        if i % 3 == 0:  # every third partition with fewer replicas than the others
            cut = 1 + i % 2
            p["replicas"], p["log_dirs"] = p["replicas"][:cut], p["log_dirs"][:cut]
            p["leader"] = p["replicas"][0]
    count = {(p["topic"], p["partition"]): len(p["replicas"]) for p in snap["partitions"]}
    result = propose(snap, options=PlannerOptions(balance_threshold=1.05))
    entries = result.plan["partitions"]
    assert any(len(e["replicas"]) < 3 and "log_dirs" in e for e in entries)
    for e in entries:
        assert len(e["replicas"]) == count[e["topic"], e["partition"]]
        assert len(e.get("log_dirs", e["replicas"])) == len(e["replicas"])
    assert validate_plan(result.plan, snap) == []


def test_it_keeps_the_starting_dirs_figures_once_replicas_moved() -> None:
    snap = parse_snapshot(dirs_add(make_cluster(6, 300, seed=4), dirs=3, skew=0.5, seed=4))
    setup = setup_mode(snap, "full")
    model = ClusterModel(snap, setup, capacity_threshold=0.8, max_replicas_per_broker=10_000)
    model.disks_follow()
    for p in range(0, 60, 3):
        free = np.setdiff1d(np.arange(model.n_brokers), model.assign[p])
        model.move_replica(p, 0, int(free[0]), "t")
    model.disks_follow()
    start = DiskModel(snap, snap.replicas, removed=None, capacity_threshold=0.8, moves="all")
    assert model.disks_start is not None and model.disks is not None
    used, lead = model.disks_start
    assert used.tolist() == start.used.tolist() and lead.tolist() == start.lead.tolist()
    assert used.tolist() != model.disks.used.tolist()
