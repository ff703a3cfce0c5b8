"""Disks inside brokers (JBOD) in the same plan (BALANCING.md §5 "Disks"): the
intra-broker goals level each broker's dirs by use and by leaders' bytes in, keep
every dir under its capacity limit, name the target dir of each replica that moves,
and `remove-disks` empties dirs onto the broker's other dirs or other brokers."""

from __future__ import annotations

import copy

import pytest
from devkit.jbod_snapshot import dirs_add

from apps.balancer.engine import PlanError, PlannerOptions, propose, validate_plan
from bench.bench_planner import make_cluster

DIRS = 4


def skewed(seed: int = 42, brokers: int = 12, partitions: int = 1_200) -> dict:
    return dirs_add(make_cluster(brokers, partitions, seed=seed), dirs=DIRS, skew=0.5, seed=seed)


def dirs_after(snap: dict, plan: dict) -> dict[tuple[str, int, int], str | None]:
    """{(topic, partition, broker): dir} once the plan ran (None: the broker chooses)."""
    out = {}
    entries = {(e["topic"], e["partition"]): e for e in plan["partitions"]}
    for p in snap["partitions"]:
        was = dict(zip(p["replicas"], p["log_dirs"], strict=True))
        e = entries.get((p["topic"], p["partition"]))
        if e is None:
            out.update({(p["topic"], p["partition"], b): d for b, d in was.items()})
            continue
        named = e.get("log_dirs", ["any"] * len(e["replicas"]))
        for b, d in zip(e["replicas"], named, strict=True):
            out[(p["topic"], p["partition"], b)] = d if d != "any" else was.get(b)
    return out


def dir_use(snap: dict, plan: dict) -> dict[int, dict[str, float]]:
    sizes = {(p["topic"], p["partition"]): p["load"]["size"] for p in snap["partitions"]}
    use: dict[int, dict[str, float]] = {
        b["id"]: {d["path"]: 0.0 for d in b["log_dirs"]} for b in snap["brokers"]
    }
    for (topic, partition, broker), d in dirs_after(snap, plan).items():
        assert d is not None, (topic, partition, broker)
        use[broker][d] += sizes[(topic, partition)]
    return use


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_it_levels_every_brokers_dirs_in_the_same_plan(seed: int) -> None:
    snap = skewed(seed)
    pr = propose(copy.deepcopy(snap))

    assert validate_plan(pr.plan, snap) == []
    disks = pr.report["disks"]
    assert disks["usage_ratio"]["before"] > 2.0
    assert disks["usage_ratio"]["after"] <= 1.15, disks["usage_ratio"]
    # one partition's leader may take more than a dir's share of its broker's writes
    # (seed 2: 11 MB/s against a share of 9.6): a little room for that
    assert disks["leader_bytes_in_ratio"]["before"] > 2.0
    assert disks["leader_bytes_in_ratio"]["after"] <= 1.2, disks["leader_bytes_in_ratio"]
    # each broker's dirs, counted from the plan itself, within the band of their mean
    for broker, use in dir_use(snap, pr.plan).items():
        mean = sum(use.values()) / len(use)
        assert max(use.values()) <= 1.15 * mean, (broker, use)
    goals = {g["name"]: g for g in pr.report["goals"]}
    assert goals["intra-broker-disk-capacity"]["end"]["violation"] == 0
    assert goals["intra-broker-disk-usage-distribution"]["satisfied_final"]
    # the brokers are balanced as well: dirs cost the broker-level figures nothing
    balance = pr.report["balance"]
    assert balance["disk"]["after"] <= 1.1 and balance["network_in"]["after"] <= 1.1


def test_it_names_the_target_dir_of_every_replica_moved_to_another_broker() -> None:
    snap = skewed()
    pr = propose(copy.deepcopy(snap))
    before = {(p["topic"], p["partition"]): p["replicas"] for p in snap["partitions"]}

    arrivals = 0
    for e in pr.plan["partitions"]:
        named = e.get("log_dirs", ["any"] * len(e["replicas"]))
        for b, d in zip(e["replicas"], named, strict=True):
            if b not in before[(e["topic"], e["partition"])]:
                arrivals += 1
                assert d.startswith("/data/"), e
    assert arrivals > 0


def test_it_moves_between_dirs_only_in_a_full_rebalance() -> None:
    snap = skewed()
    for mode in ("leaders",):
        pr = propose(copy.deepcopy(snap), mode=mode)
        assert not any("log_dirs" in e for e in pr.plan["partitions"])
    pr = propose(copy.deepcopy(snap), mode="add-brokers", brokers=[1])
    before = {(p["topic"], p["partition"]): p["replicas"] for p in snap["partitions"]}
    for e in pr.plan["partitions"]:
        named = e.get("log_dirs", ["any"] * len(e["replicas"]))
        for b, d in zip(e["replicas"], named, strict=True):
            # only arrivals get a dir: nothing already on a broker changes dir
            assert d == "any" or b not in before[(e["topic"], e["partition"])], e


def test_it_empties_a_dir_onto_the_brokers_other_dirs() -> None:
    snap = skewed()
    pr = propose(copy.deepcopy(snap), mode="remove-disks", disks=[(3, "/data/0")])

    assert validate_plan(pr.plan, snap) == []
    assert pr.report["mode"] == "remove-disks"
    use = dir_use(snap, pr.plan)
    assert use[3]["/data/0"] == 0
    # room enough on its other dirs: no replica leaves broker 3, no other broker's
    # replica changes dir (the final leadership pass may reorder replica lists)
    before = {(p["topic"], p["partition"]): p["replicas"] for p in snap["partitions"]}
    moved_dirs = 0
    for e in pr.plan["partitions"]:
        assert sorted(e["replicas"]) == sorted(before[(e["topic"], e["partition"])]), e
        named = e.get("log_dirs", ["any"] * len(e["replicas"]))
        moved = [b for b, d in zip(e["replicas"], named, strict=True) if d != "any"]
        assert moved in ([], [3]), e
        moved_dirs += len(moved)
    assert moved_dirs == sum(
        1
        for p in snap["partitions"]
        for b, d in zip(p["replicas"], p["log_dirs"], strict=True)
        if (b, d) == (3, "/data/0")
    )


def test_it_empties_a_dir_onto_other_brokers_when_its_broker_lacks_room() -> None:
    snap = skewed()
    # broker 3's other dirs have room for a fifth more than they hold: the data of
    # its first dir must partly leave the broker
    held = {f"/data/{d}": 0 for d in range(DIRS)}
    for p in snap["partitions"]:
        for b, d in zip(p["replicas"], p["log_dirs"], strict=True):
            if b == 3:
                held[d] += p["load"]["size"]
    assert held["/data/0"] > sum(held.values()) / DIRS
    for d in snap["brokers"][2]["log_dirs"][1:]:
        d["total"] = d["usable"] = int(held[d["path"]] * 1.2 / 0.8)
    pr = propose(copy.deepcopy(snap), mode="remove-disks", disks=[(3, "/data/0")])

    assert validate_plan(pr.plan, snap) == []
    before = {(p["topic"], p["partition"]): p["replicas"] for p in snap["partitions"]}
    left = [
        e
        for e in pr.plan["partitions"]
        if 3 in before[(e["topic"], e["partition"])] and 3 not in e["replicas"]
    ]
    assert left, "nothing left broker 3"
    # only replicas of broker 3 change brokers
    for e in pr.plan["partitions"]:
        old = before[(e["topic"], e["partition"])]
        assert {b for b in old if b not in e["replicas"]} <= {3}, (old, e)
    use = dir_use(snap, pr.plan)
    assert use[3]["/data/0"] == 0
    # broker 3's dirs end under their limits (other brokers' first dirs, skewed before,
    # are not this mode's to level)
    (three,) = [b for b in pr.report["disks"]["brokers"] if b["broker"] == 3]
    for d in three["dirs"][1:]:
        assert d["used_after"] <= 0.8 * d["total"], d
    goals = {g["name"]: g for g in pr.report["goals"]}
    capacity = goals["intra-broker-disk-capacity"]
    assert capacity["end"]["violation"] < capacity["start"]["violation"]


@pytest.mark.parametrize(
    ("disks", "error"),
    [
        ([], "needs the dirs to empty"),
        ([(3, "/nope")], "broker 3 has no log dir '/nope'"),
        ([(99, "/data/0")], "broker 99 is not in the snapshot"),
        ([(3, f"/data/{d}") for d in range(DIRS)], "would have no online log dir left"),
    ],
)
def test_it_refuses_a_disk_removal_it_cannot_do(disks: list, error: str) -> None:
    with pytest.raises(PlanError, match=error):
        propose(skewed(), mode="remove-disks", disks=disks)


def test_it_refuses_dirs_for_another_mode_and_a_snapshot_without_dirs() -> None:
    with pytest.raises(PlanError, match="takes no dirs"):
        propose(skewed(), mode="full", disks=[(3, "/data/0")])
    with pytest.raises(PlanError, match="lists the brokers' log dirs"):
        propose(make_cluster(6, 100), mode="remove-disks", disks=[(3, "/data/0")])


def test_it_keeps_plans_without_dirs_as_they_were() -> None:
    plain = make_cluster(12, 1_200)
    pr = propose(copy.deepcopy(plain))

    assert "disks" not in pr.report
    assert not any(g["name"].startswith("intra-broker") for g in pr.report["goals"])
    assert not any("log_dirs" in e for e in pr.plan["partitions"])


def test_it_gives_the_same_plan_twice() -> None:
    snap = skewed()
    options = PlannerOptions()
    assert propose(copy.deepcopy(snap), options=options).plan == propose(snap, options=options).plan
