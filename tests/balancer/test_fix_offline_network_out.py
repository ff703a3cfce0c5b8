"""fix-offline on small clusters: network out outranks the leader count.

Generated clusters (fixed seeds): a few brokers without racks, RF 3, heavy-tailed
partition rates, one broker dead. fix-offline moves the dead broker's replicas and
then only reorders; network out is carried by leadership alone, so the reorder
decides it. Wherever the lower bound allows, network out ends inside the 1.10 band,
whatever that leaves the leader count at (a resource goal outranks leader count
when both cannot hold), and the leader count ends in its band too wherever an
exhaustive search over every choice of leaders finds both in band.
"""

from __future__ import annotations

import numpy as np
import pytest

from apps.balancer.engine import propose
from tests.support.factories import apply_plan, assignment

THRESHOLD = 1.10


def healed_cluster(seed: int, n_brokers: int, n_partitions: int) -> dict:
    """Brokers 1..n, the last one dead; Kafka elected the first alive replica."""
    rng = np.random.default_rng(seed)
    dead = n_brokers
    rate = rng.lognormal(np.log(200_000), 1.0, n_partitions)
    fanout = rng.choice([1.0, 2.0, 3.0], n_partitions)
    parts = []
    for i in range(n_partitions):
        reps = [int(b) + 1 for b in rng.permutation(n_brokers)[:3]]
        parts.append(
            {
                "topic": f"t{i % 5}",
                "partition": i // 5,
                "replicas": reps,
                "leader": next(b for b in reps if b != dead),
                "load": {
                    "bytes_in": float(rate[i]),
                    "bytes_out": float(rate[i] * fanout[i]),
                    "size": int(rate[i] * 3600),
                },
            }
        )
    brokers = [{"id": b, "rack": None, "alive": b != dead} for b in range(1, n_brokers + 1)]
    return {"cluster": f"heal-{seed}", "brokers": brokers, "partitions": parts}


@pytest.mark.parametrize(("n_brokers", "n_partitions"), [(4, 13), (5, 16), (6, 24)])
def test_it_levels_network_out_by_reordering_after_healing(n_brokers, n_partitions) -> None:
    for seed in range(8):
        snap = healed_cluster(seed, n_brokers, n_partitions)
        pr = propose(snap, mode="fix-offline")
        fig = pr.report["balance"]["network_out"]
        assert fig["after"] <= max(THRESHOLD, fig["lower_bound"]) + 1e-6, (seed, fig)
        # data is copied for the dead broker's replicas alone
        before, after = assignment(snap), assignment(apply_plan(snap, pr.plan))
        for key, reps in after.items():
            if n_brokers not in before[key]:
                assert sorted(reps) == sorted(before[key])


def _ratios(snap: dict, replicas: list[list[int]], leaders: np.ndarray) -> tuple:
    """(leader count, network out) balance ratios, rows of `leaders` (choices, P) giving
    each partition's leader slot; over the alive brokers, as the report takes them."""
    alive = [b["id"] for b in snap["brokers"] if b["alive"]]
    reps = np.array(replicas)
    load = np.array(
        [
            p["load"]["bytes_out"] + p["load"]["bytes_in"] * (len(r) - 1)
            for p, r in zip(snap["partitions"], replicas, strict=True)
        ]
    )
    led = reps[np.arange(reps.shape[0]), leaders]
    counts = np.stack([(led == b).sum(axis=-1) for b in alive], axis=-1)
    out = np.stack([((led == b) * load).sum(axis=-1) for b in alive], axis=-1)
    n = len(alive)
    return counts.max(axis=-1) / (reps.shape[0] / n), out.max(axis=-1) / (load.sum() / n)


def test_it_reaches_both_bands_wherever_some_choice_of_leaders_does() -> None:
    """4 brokers, one dead, 11 or 12 partitions: every choice of leaders is tried (3^12).
    Network out ends in its band (or at its bound) every time; the leader count in its
    band in all but at most one of the cases where some choice reaches both (the pass
    is a greedy search: it missed one of 24 when written, which needed 8 changes)."""
    reachable, reached = 0, 0
    for n_partitions in (11, 12):
        for seed in range(12):
            snap = healed_cluster(seed, 4, n_partitions)
            pr = propose(snap, mode="fix-offline")
            fig = pr.report["balance"]
            out_top = max(THRESHOLD, fig["network_out"]["lower_bound"]) + 1e-6
            count_top = max(THRESHOLD, fig["leaders"]["lower_bound"]) + 1e-6
            assert fig["network_out"]["after"] <= out_top, (seed, fig["network_out"])
            replicas = [p["replicas"] for p in apply_plan(snap, pr.plan)["partitions"]]
            # the oracle agrees with the report on the plan itself (its leader is slot 0)
            mine = _ratios(snap, replicas, np.zeros(len(replicas), dtype=int))
            figures = (fig["leaders"]["after"], fig["network_out"]["after"])
            assert mine == pytest.approx(figures, rel=1e-3)
            codes = np.arange(3 ** len(replicas))
            choices = (codes[:, None] // 3 ** np.arange(len(replicas))[None, :]) % 3
            counts, out = _ratios(snap, replicas, choices)
            if ((counts <= count_top) & (out <= out_top)).any():
                reachable += 1
                reached += fig["leaders"]["after"] <= count_top
    assert reachable >= 15  # the search has cases to judge
    print(f"leader count in band in {reached} of {reachable}")
    assert reached >= reachable - 1, (reached, reachable)
