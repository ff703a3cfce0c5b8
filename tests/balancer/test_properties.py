"""Property-based tests on random snapshots (hypothesis).

Whatever the snapshot, mode and options: every plan is valid by BALANCING.md §2,
never puts a replica on a dead or removed broker, never breaks rack awareness that
held before, never makes a hard goal worse, and is deterministic. The final
leadership pass only reorders replica lists (no data moves), and the plan is the net
difference of every move the goals made.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.balancer.engine import (
    MODES,
    SOFT_GOALS,
    PlanError,
    PlannerOptions,
    optimizer,
    polish,
    propose,
    validate_plan,
)
from apps.balancer.engine.goals import DISK_GOALS, build_goals, build_leadership_pass
from apps.balancer.engine.measures import DISK, NW_IN, REPLICAS
from apps.balancer.engine.model import ClusterModel
from apps.balancer.engine.modes import default_soft_goals, setup_mode
from apps.balancer.engine.snapshot import parse_snapshot
from tests.support.factories import apply_plan, broker_loads, rack_violation, usable_ids

LOADS = [0.0, 1.0, 5.0, 20.0, 60.0]
SIZES = [0.0, 10.0, 100.0, 1000.0]
CAP_KEYS = {"network_in": "network_in", "network_out": "network_out", "disk": "disk"}
EPS = 1e-6
# moderate by default to keep the suite quick; raise it to hunt for bugs
EXAMPLES = int(os.environ.get("BALANCER_HYPOTHESIS_EXAMPLES", "150"))


@st.composite
def clusters(draw) -> dict:
    n = draw(st.integers(2, 7))
    rack_style = draw(st.sampled_from(["none", "some", "all"]))
    n_racks = draw(st.integers(1, 4))
    with_cap = draw(st.booleans())
    brokers = []
    for bid in range(1, n + 1):
        rack = None
        if rack_style == "all" or (rack_style == "some" and draw(st.booleans())):
            rack = f"r{draw(st.integers(0, n_racks - 1))}"
        b: dict = {"id": bid * 10, "rack": rack, "alive": draw(st.integers(0, 4)) > 0}
        if with_cap:
            b["capacity"] = {
                k: draw(st.sampled_from([40.0, 100.0, 400.0, 5000.0])) for k in CAP_KEYS
            }
        brokers.append(b)
    ids = [b["id"] for b in brokers]
    parts = []
    for i in range(draw(st.integers(0, 24))):
        rf = draw(st.integers(1, min(3, n)))
        reps = draw(st.permutations(ids))[:rf]
        leader = draw(st.sampled_from([*reps, -1]))
        parts.append(
            {
                "topic": f"t{i % 3}",
                "partition": i,
                "replicas": reps,
                "leader": leader,
                "load": {
                    "bytes_in": draw(st.sampled_from(LOADS)),
                    "bytes_out": draw(st.sampled_from(LOADS)),
                    "size": draw(st.sampled_from(SIZES)),
                },
            }
        )
    if draw(st.booleans()):
        _dirs_drawn(draw, brokers, parts)
    return {"brokers": brokers, "partitions": parts}


def _dirs_drawn(draw, brokers: list[dict], parts: list[dict]) -> None:
    """Log dirs (JBOD) on some brokers, some offline or of unknown size, and each
    replica in one of its broker's dirs, or unknown."""
    for b in brokers:
        if draw(st.integers(0, 3)) == 0:
            continue
        b["log_dirs"] = [
            {
                "path": f"/d{d}",
                "total": draw(st.sampled_from([None, 200.0, 1000.0, 20000.0])),
                "online": draw(st.integers(0, 5)) > 0,
            }
            for d in range(draw(st.integers(1, 3)))
        ]
    dirs = {b["id"]: [d["path"] for d in b.get("log_dirs", [])] for b in brokers}
    for p in parts:
        p["log_dirs"] = [
            draw(st.sampled_from([None, *dirs[r]])) if dirs[r] else None for r in p["replicas"]
        ]


def removable_dirs(snap: dict) -> list[tuple[int, str]]:
    return [(b["id"], d["path"]) for b in snap["brokers"] for d in b.get("log_dirs", [])]


def capacity(b: dict) -> dict[str, float]:
    """A broker's capacities, its disk at most what its online dirs hold (when it lists
    dirs, all of known size: BALANCING.md §1)."""
    cap = dict(b.get("capacity") or {})
    dirs = [d for d in b.get("log_dirs", []) if d["online"]]
    if b.get("log_dirs") and all(d["total"] is not None for d in dirs):
        held = sum(d["total"] for d in dirs)
        cap["disk"] = min(cap.get("disk", held), held)
    return cap


def limits(snap: dict, options: PlannerOptions) -> dict[int, dict[str, float]]:
    out = {}
    for b in snap["brokers"]:
        cap = capacity(b)
        lim = {k: cap[k] * options.capacity_threshold for k in CAP_KEYS if k in cap}
        lim["replicas"] = options.max_replicas_per_broker
        out[b["id"]] = lim
    return out


def is_overloaded(snap: dict, usable: set[int], key: str, options: PlannerOptions) -> bool:
    """Total load (dead brokers' included) over the capacity threshold of the usable
    brokers, every one of which declares a capacity."""
    caps = {b["id"]: capacity(b).get(key) for b in snap["brokers"]}
    if not usable or any(not caps[b] for b in usable):
        return False
    total = sum(v[key] for v in broker_loads(snap).values())
    return total > options.capacity_threshold * sum(caps[b] for b in usable) + EPS


def impossible(snap: dict, mode: str, ids: list[int], disks: list[tuple[int, str]] = ()) -> bool:
    """Requests the engine must refuse."""
    alive = {b["id"]: b["alive"] for b in snap["brokers"]}
    if mode == "remove-disks":
        if not disks:
            return True
        online = {
            b["id"]: {d["path"] for d in b.get("log_dirs", []) if d["online"]}
            for b in snap["brokers"]
        }
        for bid in {b for b, _ in disks}:
            if not online[bid] - {path for b, path in disks if b == bid}:
                return True
    removed = tuple(ids) if mode == "remove-brokers" else ()
    usable = usable_ids(snap, removed)
    if not usable:
        return True
    if mode == "add-brokers" and not all(alive[b] for b in ids):
        return True
    if mode in ("add-brokers", "remove-brokers", "demote") and not ids:
        return True
    if mode == "demote" and not set(usable) - set(ids):
        return True  # nobody left to lead
    return mode not in ("leaders", "demote") and any(
        len(p["replicas"]) > len(usable) for p in snap["partitions"]
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snap=clusters(), data=st.data())
def test_it_always_plans_within_the_contract(snap: dict, data) -> None:
    mode = data.draw(st.sampled_from(MODES), label="mode")
    all_ids = [b["id"] for b in snap["brokers"]]
    ids: list[int] = []
    if mode in ("add-brokers", "remove-brokers", "demote"):
        ids = data.draw(st.lists(st.sampled_from(all_ids), min_size=1, max_size=2, unique=True))
    disks: list[tuple[int, str]] = []
    if mode == "remove-disks" and removable_dirs(snap):
        disks = data.draw(
            st.lists(st.sampled_from(removable_dirs(snap)), min_size=1, max_size=2, unique=True)
        )
    goals = data.draw(
        st.one_of(
            st.none(),
            st.permutations(SOFT_GOALS).flatmap(
                lambda g: st.integers(0, len(g)).map(lambda n: tuple(g[:n]))
            ),
        ),
        label="goals",
    )
    options = PlannerOptions(
        goals=goals,
        balance_threshold=data.draw(st.sampled_from([1.0, 1.05, 1.1, 1.5])),
        capacity_threshold=data.draw(st.sampled_from([0.5, 0.8, 1.0])),
        max_replicas_per_broker=data.draw(st.sampled_from([2, 6, 10_000])),
        allow_data_loss=data.draw(st.booleans()),
    )
    try:
        pr = propose(snap, mode=mode, brokers=ids, options=options, disks=disks)
    except PlanError as err:
        assert impossible(snap, mode, ids, disks), err
        return
    assert not impossible(snap, mode, ids, disks)
    plan = pr.plan

    # valid by BALANCING.md §2
    assert validate_plan(plan, snap) == []

    removed = tuple(ids) if mode == "remove-brokers" else ()
    usable = set(usable_ids(snap, removed))
    before = {(p["topic"], p["partition"]): p["replicas"] for p in snap["partitions"]}
    after_snap = apply_plan(snap, plan)

    for e in plan["partitions"]:
        old = before[(e["topic"], e["partition"])]
        added = [b for b in e["replicas"] if b not in old]
        # never a new replica on a dead or removed broker (or outside IDS when adding)
        assert all(b in usable for b in added), (e, old)
        if mode == "add-brokers":
            assert all(b in ids for b in added)
        if mode in ("leaders", "demote"):
            assert sorted(e["replicas"]) == sorted(old)
            assert "log_dirs" not in e
        # every replica arriving on a broker that lists dirs is given one
        if "log_dirs" in e or any(b["id"] in added and b.get("log_dirs") for b in snap["brokers"]):
            named = dict(zip(e["replicas"], e.get("log_dirs", []), strict=False))
            for b in snap["brokers"]:
                dirs = b.get("log_dirs", [])
                if b["id"] in added and len(dirs) > 1 and any(d["online"] for d in dirs):
                    assert named.get(b["id"], "any") != "any", (e, b)
        # fix-offline and remove-brokers copy only what the unusable brokers force;
        # any other partition is at most reordered by the final leadership pass
        if mode in ("fix-offline", "remove-brokers") and all(r in usable for r in old):
            assert sorted(e["replicas"]) == sorted(old), (e, old)
        # rack awareness never gets worse for any partition (so what held still holds)
        assert rack_violation(after_snap, e["replicas"], removed) <= rack_violation(
            snap, old, removed
        )

    # a demoted broker follows every replica that is not demoted, and leads nothing
    # another alive replica could lead, or the report says the goal is unmet (a
    # capacity limit of every other replica's broker)
    if mode == "demote":
        alive = {b["id"] for b in snap["brokers"] if b["alive"]}
        goal = next(g for g in pr.report["goals"] if g["name"] == "demoted-brokers")
        for p in after_snap["partitions"]:
            reps = p["replicas"]
            if not all(r in alive for r in reps):
                continue  # a partition with a dead replica is never listed
            demoted_at = [i for i, r in enumerate(reps) if r in ids]
            kept_at = [i for i, r in enumerate(reps) if r not in ids]
            if demoted_at and kept_at and min(demoted_at) < max(kept_at):
                assert demoted_at[0] == 0 and not goal["satisfied_final"], (p, ids, goal)

    # hard goals never worse: replicas on unusable brokers, capacities, max replicas
    def stranded(s: dict) -> int:
        return sum(r not in usable for p in s["partitions"] for r in p["replicas"])

    assert stranded(after_snap) <= stranded(snap)
    lim = limits(snap, options)
    lb, la = broker_loads(snap), broker_loads(after_snap)
    overloaded = {key for key in CAP_KEYS if is_overloaded(snap, usable, key, options)}
    for b in usable:
        for key, limit in lim[b].items():
            x0, x1 = lb[b][key], la[b][key]
            if key in overloaded:
                continue  # checked as a whole below
            if x0 <= limit + EPS:
                assert x1 <= limit + EPS, (b, key, x0, x1, limit)
            else:
                assert x1 <= x0 + EPS, (b, key, x0, x1, limit)
    # an overloaded cluster levels: load over the limits (all of it on unusable
    # brokers) never grows, and the worst utilisation stays under the larger of what
    # it was and the ideal (dead brokers' load must land somewhere)
    for key in overloaded:

        def over(loads: dict, key: str = key) -> float:
            return sum(
                max(0.0, x[key] - lim[b][key]) if b in usable else x[key] for b, x in loads.items()
            )

        def worst(loads: dict, key: str = key) -> float:
            return max(loads[b][key] / lim[b][key] for b in usable)

        ideal = sum(x[key] for x in lb.values()) / sum(lim[b][key] for b in usable)
        assert over(la) <= over(lb) + EPS, key
        assert worst(la) <= max(worst(lb), ideal) * (1 + 1e-6) + EPS, key

    # a goal satisfied in its turn is still satisfied at the end; but network out run
    # by the final leadership pass alone holds only the top of its band there
    # (BALANCING.md §5), so the leader count after it may leave a broker under it
    ran = options.goals if options.goals is not None else default_soft_goals(mode)
    for g in pr.report["goals"]:
        if not g["satisfied"]:
            continue
        if g["name"] == "network-out-distribution" and g["name"] not in ran:
            assert all(o["side"] == "below" for o in g["end"]["offenders"]), g
        else:
            assert g["satisfied_final"], g

    # remove-disks empties the dirs it names: each replica in one moves off its broker
    # or to another of its dirs (where the partition has no replica on a dead broker)
    if mode == "remove-disks":
        entries = {(e["topic"], e["partition"]): e for e in plan["partitions"]}
        alive = {b["id"] for b in snap["brokers"] if b["alive"]}
        for p in snap["partitions"]:
            if not set(p["replicas"]) <= alive:
                continue  # a plan never lists a partition with a dead replica
            for r, d in zip(p["replicas"], p.get("log_dirs") or [], strict=True):
                if (r, d) not in disks:
                    continue
                e = entries[(p["topic"], p["partition"])]
                if r in e["replicas"]:
                    assert e["log_dirs"][e["replicas"].index(r)] not in ("any", d), (p, e)

    # deterministic
    again = propose(snap, mode=mode, brokers=ids, options=options, disks=disks)
    assert again.plan == plan


@contextmanager
def recording_moves() -> Iterator[list[tuple[str, int, int, int]]]:
    """Every move_replica / move_leader / swap_followers call of the engine, in order."""
    moves: list[tuple[str, int, int, int]] = []
    replica, leader = ClusterModel.move_replica, ClusterModel.move_leader
    followers = ClusterModel.swap_followers

    def swap_followers(self, p, k1, k2, goal):
        moves.append(("f", p, k1, k2))
        followers(self, p, k1, k2, goal)

    def move_replica(self, p, k, d, goal, vec=None):
        moves.append(("r", p, k, d))
        replica(self, p, k, d, goal, vec)

    def move_leader(self, p, k, goal):
        moves.append(("l", p, k, 0))
        leader(self, p, k, goal)

    with (
        mock.patch.object(ClusterModel, "move_replica", move_replica),
        mock.patch.object(ClusterModel, "move_leader", move_leader),
        mock.patch.object(ClusterModel, "swap_followers", swap_followers),
    ):
        yield moves


def draw_request(snap: dict, data) -> tuple[str, list[int], PlannerOptions]:
    mode = data.draw(st.sampled_from(MODES), label="mode")
    all_ids = [b["id"] for b in snap["brokers"]]
    ids: list[int] = []
    if mode in ("add-brokers", "remove-brokers", "demote"):
        ids = data.draw(st.lists(st.sampled_from(all_ids), min_size=1, max_size=2, unique=True))
    options = PlannerOptions(balance_threshold=data.draw(st.sampled_from([1.0, 1.1, 1.5])))
    return mode, ids, options


def model_of(snap: dict, mode: str, ids: list[int], options: PlannerOptions) -> ClusterModel:
    parsed = parse_snapshot(snap)
    return ClusterModel(
        parsed,
        setup_mode(parsed, mode, ids),
        capacity_threshold=options.capacity_threshold,
        max_replicas_per_broker=options.max_replicas_per_broker,
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snap=clusters(), data=st.data())
def test_it_never_moves_data_in_the_leadership_pass(snap: dict, data) -> None:
    mode, ids, options = draw_request(snap, data)
    try:
        model = model_of(snap, mode, ids, options)
    except PlanError:
        return
    if data.draw(st.booleans(), label="after the goals"):  # else on the cluster as it is
        optimizer.run(model, build_goals(default_soft_goals(mode), options))
    sets = np.sort(model.assign, axis=1)
    loads = model.load[:, [NW_IN, DISK, REPLICAS]].copy()
    leadership = build_leadership_pass(options)
    gross = {g.name: model.counter(g.name).replica_moves for g in leadership}
    # the leadership pass alone: `run` ends with the movement and polish passes, which
    # move data by design (they gave back a replica moved by the first run otherwise)
    with (
        mock.patch.object(optimizer, "trim", lambda model: 0),
        mock.patch.object(optimizer, "polish", lambda model, goals: 0),
    ):
        optimizer.run(model, [], leadership)
    # every partition keeps its replica set: only the order (the leader) may change
    assert (np.sort(model.assign, axis=1) == sets).all()
    assert np.allclose(model.load[:, [NW_IN, DISK, REPLICAS]], loads)
    assert all(model.counter(g.name).replica_moves == gross[g.name] for g in leadership)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snap=clusters(), data=st.data())
def test_it_plans_the_net_difference_of_all_moves(snap: dict, data) -> None:
    mode, ids, options = draw_request(snap, data)
    try:
        with recording_moves() as moves:
            pr = propose(snap, mode=mode, brokers=ids, options=options)
    except PlanError:
        return
    # replay every move the goals made (rollbacks included) on the starting lists
    lists = {(p["topic"], p["partition"]): list(p["replicas"]) for p in snap["partitions"]}
    order = sorted(lists)  # the engine's partition order (BALANCING.md: by topic, number)
    ids_sorted = sorted(b["id"] for b in snap["brokers"])
    for kind, p, k, d in moves:
        reps = lists[order[p]]
        if kind == "r":
            reps[k] = ids_sorted[d]
        elif kind == "f":
            reps[k], reps[d] = reps[d], reps[k]
        else:
            reps[0], reps[k] = reps[k], reps[0]
    start = {(p["topic"], p["partition"]): p for p in snap["partitions"]}
    net = {key: reps for key, reps in lists.items() if reps != start[key]["replicas"]}
    before = {(p["topic"], p["partition"]): p["replicas"] for p in snap["partitions"]}
    planned = {
        (e["topic"], e["partition"]): e["replicas"]
        for e in pr.plan["partitions"]
        if e["replicas"] != before[(e["topic"], e["partition"])] or "log_dirs" not in e
    }
    assert planned == net
    # movement counts only replicas that end on a broker which did not hold them
    added = [(key, b) for key, reps in net.items() for b in reps if b not in start[key]["replicas"]]
    assert pr.report["movement"]["replica_moves"] == len(added)
    assert pr.report["movement"]["bytes_moved"] == round(
        sum(start[key]["load"]["size"] for key, _ in added)
    )
    gross = sum(g["replica_moves"] for g in pr.report["goals"])
    assert gross >= len(added)


def no_figure_worse(pr, than) -> None:
    """No balance figure and no broker-level goal's final violation of `pr` is worse
    than `than`'s. The goals on dirs are left out: they run after trim and polish, on
    whatever assignment those leave, and neither pass weighs dirs (BALANCING.md §5)."""
    for name, fig in pr.report["balance"].items():
        before = than.report["balance"][name]
        assert fig["after"] <= before["after"] + EPS, name
        assert fig["min_after"] >= before["min_after"] - EPS, name
    for g, g0 in zip(pr.report["goals"], than.report["goals"], strict=True):
        if g["name"] in DISK_GOALS:
            continue
        assert g["violation_final"] <= g0["violation_final"] * (1 + 1e-9) + EPS, g["name"]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snap=clusters(), data=st.data())
def test_it_gives_back_moves_without_losing_balance(snap: dict, data) -> None:
    mode, ids, options = draw_request(snap, data)
    try:
        pr = propose(snap, mode=mode, brokers=ids, options=options)
    except PlanError:
        return
    # the polish pass after it is left out of both runs (its own test below)
    with mock.patch.object(optimizer, "polish", lambda model, goals: 0):
        pr = propose(snap, mode=mode, brokers=ids, options=options)
        with mock.patch.object(optimizer, "trim", lambda model: 0):
            untrimmed = propose(snap, mode=mode, brokers=ids, options=options)
    moved, was = pr.report["movement"], untrimmed.report["movement"]
    assert moved["bytes_moved"] <= was["bytes_moved"]
    assert moved["replica_moves"] == was["replica_moves"] - moved["given_back"]
    no_figure_worse(pr, untrimmed)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snap=clusters(), data=st.data())
def test_it_polishes_without_making_any_figure_worse(snap: dict, data) -> None:
    mode, ids, options = draw_request(snap, data)
    try:
        pr = propose(snap, mode=mode, brokers=ids, options=options)
    except PlanError:
        return
    with mock.patch.object(optimizer, "polish", lambda model, goals: 0):
        rough = propose(snap, mode=mode, brokers=ids, options=options)
    no_figure_worse(pr, rough)
    # within its byte budget
    on_disk = sum(p["load"].get("size", 0) * len(p["replicas"]) for p in snap["partitions"])
    extra = pr.report["movement"]["bytes_moved"] - rough.report["movement"]["bytes_moved"]
    assert extra <= polish.BUDGET_SHARE * on_disk + 1
