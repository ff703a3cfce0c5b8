"""A hand-built case per mode, the seeds' cases, and the plan/report contract."""

from __future__ import annotations

import pytest

from apps.balancer.engine import PlanError, PlannerOptions, propose, validate_plan
from tests.support.factories import (
    MiB,
    apply_plan,
    assignment,
    broker,
    broker_loads,
    part,
    ratio,
    snapshot,
)


def loads_of(snap: dict, plan: dict, what: str = "replicas") -> dict[int, float]:
    return {b: v[what] for b, v in broker_loads(apply_plan(snap, plan)).items()}


# ---------------------------------------------------------------- modes


def skewed() -> dict:
    return snapshot(
        [broker(1, "a"), broker(2, "b"), broker(3, "c"), broker(4, "a")],
        [part("t", i, [1, 2], bytes_in=10.0, size=100.0) for i in range(8)]
        + [part("u", i, [2, 3], bytes_in=1.0, size=10.0) for i in range(4)],
    )


def test_it_balances_everything_in_full_mode() -> None:
    snap = skewed()
    pr = propose(snap, mode="full")
    assert validate_plan(pr.plan, snap) == []
    after = apply_plan(snap, pr.plan)
    for resource in ("network_in", "replicas"):
        assert ratio(after, resource) <= 1.10 + 1e-9
    assert pr.report["mode"] == "full"


def test_it_moves_load_only_onto_added_brokers() -> None:
    snap = snapshot(
        [broker(1), broker(2), broker(3), broker(4)],
        [part("t", i, [1 + i % 2, 1 + (i + 1) % 2], bytes_in=5.0, size=50.0) for i in range(10)]
        + [part("u", 0, [3], bytes_in=1.0)],
    )
    pr = propose(snap, mode="add-brokers", brokers=[4])
    before = assignment(snap)
    for e in pr.plan["partitions"]:
        old = before[(e["topic"], e["partition"])]
        assert [b for b in e["replicas"] if b not in old] in ([], [4])
        assert e["replicas"][0] in (old[0], 4)
    counts = loads_of(snap, pr.plan)
    assert counts[4] >= 4 and counts[3] == 1  # broker 3 neither gives nor takes
    assert pr.report["brokers"]["added"] == [4]


def test_it_drains_removed_brokers() -> None:
    snap = skewed()
    pr = propose(snap, mode="remove-brokers", brokers=[2])
    after = assignment(apply_plan(snap, pr.plan))
    assert all(2 not in reps for reps in after.values())
    assert validate_plan(pr.plan, snap) == []
    assert pr.report["brokers"]["removed"] == [2]
    assert pr.report["movement"]["replica_moves"] == 12


def test_it_fixes_only_what_dead_brokers_force() -> None:
    snap = snapshot(
        [broker(1), broker(2), broker(3), broker(4, alive=False)],
        [part("t", 0, [4, 1], leader=1, size=7.0)]
        + [part("t", i, [1, 2], bytes_in=9.0) for i in range(1, 6)],  # skewed but alive
    )
    pr = propose(snap, mode="fix-offline")
    entries = {(e["topic"], e["partition"]): e["replicas"] for e in pr.plan["partitions"]}
    assert 4 not in entries[("t", 0)]
    # data is copied for t-0 alone; the others are at most reordered, to spread the
    # leadership broker 1 holds (6 of 6) over brokers 1 and 2
    before = assignment(snap)
    for key, reps in entries.items():
        if key != ("t", 0):
            assert sorted(reps) == sorted(before[key]) == [1, 2]
    assert pr.report["movement"]["replica_moves"] == 1
    assert pr.report["movement"]["bytes_moved"] == 7
    leaders = [reps[0] for reps in assignment(apply_plan(snap, pr.plan)).values()]
    assert leaders.count(1) <= 3


def test_it_reorders_leaders_without_moving_data() -> None:
    snap = snapshot(
        [broker(1), broker(2), broker(3)],
        [part("t", i, [1, 2, 3], bytes_in=1.0, bytes_out=2.0, size=MiB) for i in range(9)],
    )
    pr = propose(snap, mode="leaders")
    before = assignment(snap)
    for e in pr.plan["partitions"]:
        assert sorted(e["replicas"]) == sorted(before[(e["topic"], e["partition"])])
    assert sorted(loads_of(snap, pr.plan, "leaders").values()) == [3, 3, 3]
    assert pr.report["movement"]["bytes_moved"] == 0


@pytest.mark.parametrize(
    ("mode", "brokers", "message"),
    [
        ("sideways", [], "unknown mode 'sideways'"),
        ("add-brokers", [], "needs the broker ids"),
        ("full", [1], "takes no broker ids"),
        ("remove-brokers", [9], "broker 9 is not in the snapshot"),
        ("add-brokers", [5], "broker 5 can't be added: it is not alive"),
        ("remove-brokers", [1, 2, 3, 4], "no alive broker is left"),
    ],
)
def test_it_rejects_impossible_requests(mode: str, brokers: list[int], message: str) -> None:
    snap = skewed()
    snap["brokers"].append(broker(5, alive=False))
    with pytest.raises(PlanError, match=message):
        propose(snap, mode=mode, brokers=brokers)


def test_it_rejects_unknown_goals_and_bad_thresholds() -> None:
    with pytest.raises(PlanError, match="unknown goal 'cpu-distribution'"):
        propose(skewed(), options=PlannerOptions(goals=("cpu-distribution",)))
    with pytest.raises(PlanError, match="balance threshold must be >= 1.0"):
        propose(skewed(), options=PlannerOptions(balance_threshold=0.9))


# ---------------------------------------------------------------- seeds


def sixteen_on_two(alive2: bool = True, empty2: bool = False) -> dict:
    return snapshot(
        [broker(1), broker(2, alive=alive2)],
        [
            part(
                "self-balancing-topic",
                i,
                [1 if empty2 or i % 2 else 2],
                bytes_in=5 * MiB / 16,
                bytes_out=5 * MiB / 16,
                size=64 * MiB,
            )
            for i in range(16)
        ],
    )


def test_it_leaves_single_replica_partitions_of_a_stopped_broker_alone() -> None:
    # 16 partitions, 1 replica each, on 2 brokers; broker 2 stops: healing them would
    # lose their data, so they are reported and left out
    snap = sixteen_on_two(alive2=False)
    pr = propose(snap)
    assert pr.plan == {"version": 1, "partitions": []}
    assert len(pr.report["data_loss"]["skipped"]) == 8
    assert pr.report["data_loss"]["healed"] == []


def test_it_recreates_them_on_survivors_when_data_loss_is_allowed() -> None:
    snap = sixteen_on_two(alive2=False)
    pr = propose(snap, options=PlannerOptions(allow_data_loss=True))
    assert len(pr.plan["partitions"]) == 8
    assert all(e["replicas"] == [1] for e in pr.plan["partitions"])
    assert len(pr.report["data_loss"]["healed"]) == 8
    assert validate_plan(pr.plan, snap) == []


@pytest.mark.parametrize(("mode", "brokers"), [("full", []), ("add-brokers", [2])])
def test_it_fills_the_broker_that_returns_empty(mode: str, brokers: list[int]) -> None:
    snap = sixteen_on_two(empty2=True)
    pr = propose(snap, mode=mode, brokers=brokers)
    assert loads_of(snap, pr.plan) == {1: 8, 2: 8}
    assert pr.report["movement"]["replica_moves"] == 8
    assert pr.report["balance"]["network_in"]["after"] == pytest.approx(1.0)


def thirteen_rf3(n_brokers: int) -> dict:
    rows = [[2, 0, 1], [0, 1, 2], [1, 2, 0], [2, 1, 0], [0, 2, 1], [1, 0, 2]]
    return snapshot(
        [broker(b, alive=b != 0) for b in range(n_brokers)],
        [
            part(
                "my-failsafe-topic",
                i,
                rows[i % 6],
                leader=next(r for r in rows[i % 6] if r),
                bytes_in=MiB,
                size=100 * MiB,
            )
            for i in range(13)
        ],
    )


def test_it_refuses_when_replication_factor_exceeds_the_alive_brokers() -> None:
    # 13 partitions of 3 replicas on 3 brokers, broker 0 killed: nowhere to re-replicate
    with pytest.raises(PlanError, match="has 3 replicas but only 2 alive brokers can hold them"):
        propose(thirteen_rf3(3), mode="fix-offline")


def test_it_re_replicates_a_killed_broker_when_a_spare_exists() -> None:
    snap = thirteen_rf3(4)
    pr = propose(snap, mode="fix-offline")
    after = assignment(apply_plan(snap, pr.plan))
    assert all(sorted(reps) == [1, 2, 3] for reps in after.values())
    assert pr.report["movement"]["replica_moves"] == 13
    # keeping Kafka's elections left leaders at 7, 6 and 0 (issue 10): the final
    # leadership pass spreads them as evenly as 13 over 3 allows, by reordering alone
    leaders = [reps[0] for reps in after.values()]
    assert sorted(leaders.count(b) for b in (1, 2, 3)) == [4, 4, 5]
    assert (
        pr.report["balance"]["leaders"]["after"] == pr.report["balance"]["leaders"]["lower_bound"]
    )


def test_it_leaves_leadership_alone_where_a_plan_would_name_a_dead_broker() -> None:
    pr = propose(thirteen_rf3(3), mode="leaders")
    assert pr.plan["partitions"] == []


def test_it_converges_three_brokers_at_80_120_40() -> None:
    parts = []
    for b, mib in ((0, 80), (1, 120), (2, 40)):
        parts += [
            part("traffic", len(parts) + i, [b], bytes_in=4 * MiB, size=GiB)
            for i in range(mib // 4)
        ]
    snap = snapshot([broker(0), broker(1), broker(2)], parts)
    pr = propose(snap)
    after = loads_of(snap, pr.plan, "network_in")
    assert all(abs(v / MiB - 80) <= 8 for v in after.values()), after
    assert pr.report["balance"]["network_in"]["before"] == pytest.approx(1.5)
    assert pr.report["balance"]["network_in"]["after"] <= 1.10
    assert pr.report["movement"]["replica_moves"] <= 10  # 40 MiB/s from broker 1 to 2


GiB = 1024 * MiB


def test_it_keeps_the_leader_band_met_when_a_drained_broker_keeps_a_leadership() -> None:
    # found by hypothesis: max-replicas (2) keeps most replicas on broker 10, which is
    # being removed; leader bytes in used to take t1-4's leadership off it, so the
    # usable brokers' leader total grew, the band with it, and broker 70 fell below
    # a leader band met in its turn
    def p(topic: str, n: int, reps: list[int], bytes_in: float = 0.0, size: float = 0.0):
        return part(topic, n, reps, bytes_in=bytes_in, size=size)

    snap = snapshot(
        [broker(b, alive=b not in (30, 40, 60)) for b in (10, 20, 30, 40, 50, 60, 70)],
        [
            p("t0", 0, [10], 1.0),
            p("t1", 1, [10, 20], 5.0),
            *[p(f"t{i % 3}", i, [10]) for i in (2, 3, 5, 6, 7)],
            p("t1", 4, [10, 50], 1.0),
            p("t2", 8, [20]),
            p("t0", 9, [20]),
            p("t1", 10, [50]),
            p("t2", 11, [50]),
            p("t0", 12, [10], 0.0, 10.0),
        ],
    )
    options = PlannerOptions(
        balance_threshold=1.5, capacity_threshold=0.5, max_replicas_per_broker=2
    )
    pr = propose(snap, mode="remove-brokers", brokers=[10], options=options)
    for g in pr.report["goals"]:
        if g["satisfied"]:
            assert g["satisfied_final"], g["name"]
