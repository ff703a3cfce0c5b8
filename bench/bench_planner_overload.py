"""Overloaded, heterogeneous clusters (issue 10, point 2): a baseline.

    .venv/bin/python bench/bench_planner_overload.py [--json out.json]

12 brokers in 3 racks with three capacity classes (1x, 2x, 4x), 2,400 partitions
(RF 3) placed without regard to capacity, total network in scaled to 85 %, 95 %,
100 % and 110 % of the capacity threshold (80 % of the total capacity). Printed per
load level: the worst network-in utilisation over capacity before and after, relative
to the ideal (total / total capacity), the hard goals left unmet and by how much
(`unmet_hard_goals`), replica moves and bytes moved.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from apps.balancer.engine import propose  # noqa: E402

CAPACITY_THRESHOLD = 0.80
LEVELS = (0.85, 0.95, 1.00, 1.10)


def make_cluster(level: float, *, seed: int = 11) -> dict:
    rng = np.random.default_rng(seed)
    n, parts, rf = 12, 2_400, 3
    # each rack holds every capacity class, so rack awareness leaves room to level
    cap_in = np.array([(1, 2, 4)[(b // 3) % 3] for b in range(n)], dtype=float) * 50e6
    rate = rng.lognormal(0.0, 0.8, parts)
    # total network in (rate x rf replicas) = level x threshold x total capacity
    rate *= level * CAPACITY_THRESHOLD * cap_in.sum() / (rate.sum() * rf)
    brokers = [
        {
            "id": b + 1,
            "rack": f"r{b % 3}",
            "alive": True,
            "capacity": {
                "network_in": float(cap_in[b]),
                "network_out": float(4 * cap_in[b]),
                "disk": 1e13,
            },
        }
        for b in range(n)
    ]
    partitions = []
    for i in range(parts):
        racks = rng.permutation(3)
        reps = [int(r + 3 * rng.integers(0, 4)) + 1 for r in racks]
        partitions.append(
            {
                "topic": f"t{i % 20}",
                "partition": i // 20,
                "replicas": reps,
                "leader": reps[0],
                "load": {
                    "bytes_in": float(rate[i]),
                    "bytes_out": float(rate[i]),
                    "size": int(rate[i] * 600),
                },
            }
        )
    return {"cluster": f"overload-{level}", "brokers": brokers, "partitions": partitions}


def run_level(level: float) -> dict:
    snap = make_cluster(level)
    t0 = time.perf_counter()
    pr = propose(snap)
    seconds = time.perf_counter() - t0
    r = pr.report
    nw = r["balance"]["network_in"]
    return {
        "level": level,
        "network_in": [nw["before"], nw["after"]],
        "ideal_utilisation": nw["ideal"],
        "unmet_hard_goals": r["unmet_hard_goals"],
        "movement": r["movement"],
        "seconds": round(seconds, 3),
    }


def print_result(res: dict) -> None:
    m = res["movement"]
    b, a = res["network_in"]
    unmet = "; ".join(
        f"{u['name']} {u['violation_before']:.3g} -> {u['violation_after']:.3g} "
        f"({u['offenders']} brokers)"
        for u in res["unmet_hard_goals"]
    )
    print(
        f"load {res['level']:.0%} of threshold | ideal utilisation "
        f"{res['ideal_utilisation']:.2f} | network in worst/ideal {b:.3f} -> {a:.3f} | "
        f"replica moves {m['replica_moves']:,}, bytes moved {m['bytes_moved'] / 1e9:.1f} GB | "
        f"unmet hard goals: {unmet or 'none'} | {res['seconds']:.2f} s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()
    results = [run_level(level) for level in LEVELS]
    for res in results:
        print_result(res)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
