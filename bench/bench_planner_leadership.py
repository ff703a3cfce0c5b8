"""Leadership after modes that move replicas (issue 10, point 1).

    .venv/bin/python bench/bench_planner_leadership.py
    .venv/bin/python bench/bench_planner_leadership.py --json out.json

Cases, each from a fixed seed:
  heal-4       4 brokers, RF 3, 13 partitions; broker 4 dies and fix-offline heals it
               (the issue's case: one broker ended preferred leader of 9 of 13)
  heal-24      24 brokers in 6 racks, RF 3, 6,000 partitions; 2 brokers die
  add-6+2      6 brokers with leadership skewed to broker 1, brokers 7 and 8 added
  add-24+4     24 brokers, 6,000 partitions; 4 empty brokers added

Printed per case: leaders and leader-bytes-in ratio (busiest usable broker over the
mean) before and after, replica moves, bytes moved, leadership moves, partitions in
the plan and planner time. Leaders <= 1.10 after every mode is the target.

Beside leaders after: the count bound (ceil(ideal) / ideal) and the reorder bound of
leader_bound.py (no reorder of the final replica lists does better without a
broker's network out above max(1.10 x ideal, what it carries after the plan); a
relaxation, so it never claims more than is true, and "n/a" above 12 brokers).
Where leaders stay above 1.10 the bench prints why the planner stopped.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from leader_bound import leader_figures  # noqa: E402

from apps.balancer.engine import propose  # noqa: E402


def _partitions(replicas: list[list[int]], rng: np.random.Generator) -> list[dict]:
    rate = rng.lognormal(np.log(200_000), 1.0, len(replicas))
    return [
        {
            "topic": f"topic-{i % 7}",
            "partition": i // 7,
            "replicas": reps,
            "leader": reps[0],
            "load": {
                "bytes_in": float(rate[i]),
                "bytes_out": float(rate[i] * 2),
                "size": int(rate[i] * 3600),
            },
        }
        for i, reps in enumerate(replicas)
    ]


def heal_case(n_brokers: int, n_partitions: int, dead: list[int], seed: int) -> dict:
    """Racks of equal size, RF 3 on distinct racks; the dead brokers' partitions were
    led by the lowest surviving id (Kafka elects the first in-sync replica)."""
    rng = np.random.default_rng(seed)
    racks = min(n_brokers, 6)
    replicas = []
    for _ in range(n_partitions):
        rs = rng.choice(racks, 3, replace=False)
        reps = [int(rng.choice(np.arange(r, n_brokers, racks))) + 1 for r in rs]
        replicas.append(reps)
    parts = _partitions(replicas, rng)
    for p in parts:
        if p["replicas"][0] in dead:
            p["leader"] = min(r for r in p["replicas"] if r not in dead)
    brokers = [
        {"id": b, "rack": f"r{(b - 1) % racks}", "alive": b not in dead}
        for b in range(1, n_brokers + 1)
    ]
    return {"cluster": "heal", "brokers": brokers, "partitions": parts}


def add_case(n_brokers: int, n_partitions: int, added: int, seed: int) -> dict:
    """Leadership skewed to low ids (preferred leader = smallest id of the set half the
    time); `added` empty brokers at the end."""
    rng = np.random.default_rng(seed)
    replicas = []
    for _ in range(n_partitions):
        reps = [int(b) + 1 for b in rng.choice(n_brokers, 3, replace=False)]
        if rng.random() < 0.5:
            reps.sort()
        replicas.append(reps)
    total = n_brokers + added
    brokers = [{"id": b, "rack": None, "alive": True} for b in range(1, total + 1)]
    return {"cluster": "add", "brokers": brokers, "partitions": _partitions(replicas, rng)}


CASES = {
    "heal-4": lambda: (heal_case(4, 13, [4], seed=7), "fix-offline", []),
    "heal-24": lambda: (heal_case(24, 6_000, [5, 11], seed=7), "fix-offline", []),
    "add-6+2": lambda: (add_case(6, 60, 2, seed=3), "add-brokers", [7, 8]),
    "add-24+4": lambda: (add_case(24, 6_000, 4, seed=3), "add-brokers", [25, 26, 27, 28]),
}


def leader_bytes_in_ratio(snap: dict, plan: dict, usable: set[int]) -> tuple[float, float]:
    after = {(e["topic"], e["partition"]): e["replicas"] for e in plan["partitions"]}

    def ratio(pick) -> float:
        load = dict.fromkeys(usable, 0.0)
        for p in snap["partitions"]:
            lead = pick(p)[0]
            if lead in load:
                load[lead] += p["load"]["bytes_in"]
        mean = sum(load.values()) / len(load)
        return max(load.values()) / mean if mean else 1.0

    return ratio(lambda p: p["replicas"]), ratio(
        lambda p: after.get((p["topic"], p["partition"]), p["replicas"])
    )


def run_case(name: str) -> dict:
    snap, mode, ids = CASES[name]()
    t0 = time.perf_counter()
    pr = propose(snap, mode=mode, brokers=ids)
    seconds = time.perf_counter() - t0
    r = pr.report
    usable = {b["id"] for b in snap["brokers"] if b["alive"]}
    lbi = leader_bytes_in_ratio(snap, pr.plan, usable)
    lead = leader_figures(snap, pr.plan, sorted(usable))
    return {
        "case": name,
        "mode": mode,
        "brokers": len(snap["brokers"]),
        "partitions": len(snap["partitions"]),
        "leaders": [r["balance"]["leaders"]["before"], r["balance"]["leaders"]["after"]],
        "leaders_bound": r["balance"]["leaders"]["lower_bound"],
        "leaders_reorder_bound": lead["bound"],
        "leaders_why": lead["why"] if r["balance"]["leaders"]["after"] > 1.10 + 1e-9 else [],
        "leader_bytes_in": [round(x, 6) for x in lbi],
        "movement": r["movement"],
        "seconds": round(seconds, 3),
    }


def print_result(res: dict) -> None:
    m = res["movement"]
    lb, la = res["leaders"]
    bb, ba = res["leader_bytes_in"]
    rb = res["leaders_reorder_bound"]
    reorder = "n/a" if rb is None else f"{rb:.3f}"
    print(
        f"{res['case']:<9} {res['mode']:<12} {res['brokers']:>3} brokers {res['partitions']:>6,} "
        f"partitions | leaders {lb:.3f} -> {la:.3f} (bound {res['leaders_bound']:.3f}, "
        f"reorder bound {reorder}) | "
        f"leader bytes in {bb:.3f} -> {ba:.3f} | replica moves {m['replica_moves']:,}, "
        f"bytes moved {m['bytes_moved'] / 1e9:.2f} GB, leadership moves "
        f"{m['leadership_moves']:,}, partitions in plan {m['partitions_changed']:,} | "
        f"{res['seconds']:.2f} s"
    )
    for w in res["leaders_why"]:
        print(f"          leaders stop: {w}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--case", choices=[*CASES, "all"], default="all")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()
    names = list(CASES) if args.case == "all" else [args.case]
    results = [run_case(n) for n in names]
    for res in results:
        print_result(res)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
