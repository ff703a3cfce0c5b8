"""fix-offline on small clusters: network out outranks the leader count.

Generated clusters (fixed seeds): a few brokers without racks, RF 3, heavy-tailed
partition rates, one broker dead. fix-offline moves the dead broker's replicas and
then only reorders; network out is carried by leadership alone, so the reorder
decides it. Wherever the lower bound allows, network out ends inside the 1.10 band,
whatever that leaves the leader count at (a resource goal outranks leader count
when both cannot hold).
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
