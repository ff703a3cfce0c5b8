"""Overloaded clusters where every broker is above its capacity limit still level.

Generated clusters (fixed seeds): three racks of brokers with different capacities,
every rack holding the same total capacity, RF 3 with one replica per rack, placed
without regard to capacity, and network in and disk totals above the capacity
threshold so far that every broker starts above its limit in both. No plan meets
the capacity goals; each rack holds a third of the capacity and must hold a third
of the load, so levelling utilisation in proportion to capacity, rack by rack,
reaches about the ideal for both resources at once, and the load over the limits
never grows.
"""

from __future__ import annotations

import numpy as np
import pytest

from apps.balancer.engine import propose

CAPACITY_THRESHOLD = 0.8
CLASSES = {3: (1, 2, 3), 4: (1, 1, 2, 2)}


def overloaded_racks(seed: int, per_rack: int, level: float, n_partitions: int = 300) -> dict:
    """Network in and disk at `level` x the capacity threshold of the total capacity."""
    rng = np.random.default_rng(seed)
    brokers, racks = [], []
    for r in range(3):
        ids = []
        for c in rng.permutation(CLASSES[per_rack]).tolist():
            bid = len(brokers) + 1
            ids.append(bid)
            brokers.append(
                {
                    "id": bid,
                    "rack": f"r{r}",
                    "alive": True,
                    "capacity": {
                        "network_in": c * 50e6,
                        "network_out": c * 400e6,
                        "disk": c * 1e12,
                    },
                }
            )
        racks.append(ids)
    total = {k: sum(b["capacity"][k] for b in brokers) for k in ("network_in", "disk")}
    rate = rng.lognormal(0.0, 0.8, n_partitions)
    rate *= level * CAPACITY_THRESHOLD * total["network_in"] / (rate.sum() * 3)
    size = rate * rng.lognormal(0.0, 0.5, n_partitions)
    size *= level * CAPACITY_THRESHOLD * total["disk"] / (size.sum() * 3)
    parts = []
    for i in range(n_partitions):
        reps = [int(rng.choice(racks[r])) for r in rng.permutation(3).tolist()]
        parts.append(
            {
                "topic": f"t{i % 10}",
                "partition": i // 10,
                "replicas": reps,
                "leader": reps[0],
                "load": {
                    "bytes_in": float(rate[i]),
                    "bytes_out": float(rate[i]),
                    "size": int(size[i]),
                },
            }
        )
    return {"cluster": f"overload-{seed}", "brokers": brokers, "partitions": parts}


@pytest.mark.parametrize(("per_rack", "level"), [(3, 2.0), (4, 2.0)])
def test_it_levels_every_broker_over_its_limit_in_proportion_to_capacity(per_rack, level) -> None:
    for seed in range(4):
        snap = overloaded_racks(seed, per_rack, level)
        pr = propose(snap)
        report = pr.report
        loads = report["broker_loads"]["before"]
        caps = {b["id"]: b["capacity"] for b in snap["brokers"]}
        for key in ("network_in", "disk"):
            # the class: every broker starts above its limit
            assert all(
                x > CAPACITY_THRESHOLD * caps[b][key]
                for b, x in zip(report["broker_loads"]["brokers"], loads[key], strict=True)
            ), (seed, key)
            fig = report["balance"][key]
            assert fig["before"] > 1.3, (seed, key, fig)
            assert fig["after"] <= max(1.05, fig["lower_bound"]) + 1e-6, (seed, key, fig)
        unmet = {u["name"]: u for u in report["unmet_hard_goals"]}
        for name in ("network-in-capacity", "disk-capacity"):
            assert unmet[name]["violation_after"] <= unmet[name]["violation_before"] * (1 + 1e-9)
