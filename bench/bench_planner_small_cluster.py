"""A small cluster where a broker came back empty (issue 10, point 3).

    .venv/bin/python bench/bench_planner_small_cluster.py
    .venv/bin/python bench/bench_planner_small_cluster.py --seeds 10 --json out.json

5 brokers, no racks, RF 3, topics with heavy-tailed rates and sizes (fixed seeds);
every replica sits on brokers 1-4: broker 5 came back with an empty disk. The
planner runs `full` with its defaults (threshold 1.10). Printed per seed: the ratio
(busiest broker over the ideal) before and after for network in, network out, disk,
replicas and leaders, replica moves, bytes moved (and their share of all replicas'
bytes) and time. Target: network out <= 1.126 x ideal (Cruise Control's figure on
the issue's cluster), every ratio <= 1.10 where granularity allows.

Beside each ratio after: its lower bound (the report's: largest replica / ideal for
loads, ceil(ideal) / ideal for counts) and, for leaders, the reorder bound of
leader_bound.py (no reorder of the final replica lists does better without a
broker's network out above max(1.10 x ideal, what it carries after the plan)). A
ratio above 1.10 whose bound is below 1.10 is not shown to be out of reach; for
leaders the bench then prints why the planner stopped (the brokers above the band,
their network out and the network out of the brokers with room for a leader).
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

N_BROKERS = 5
N_PARTITIONS = 240
CC_NETWORK_OUT = 1.126  # Cruise Control's network-out ratio on the cluster
THRESHOLD = 1.10  # the planner's default balance threshold


def make_cluster(seed: int, n_partitions: int = N_PARTITIONS) -> dict:
    rng = np.random.default_rng(seed)
    topics = 8
    t_rate = rng.lognormal(np.log(300_000), 1.2, topics)
    t_fanout = rng.choice([0.0, 1.0, 2.0, 3.0], topics)
    t_retention = rng.choice([3600.0, 86400.0, 3 * 86400.0], topics)
    topic = rng.integers(0, topics, n_partitions)
    rate = t_rate[topic] * rng.lognormal(0.0, 0.5, n_partitions)
    total_in = float(rate.sum()) * 3
    cap = float(np.ceil(total_in / N_BROKERS / 0.4 / 1e6) * 1e6)
    brokers = [
        {
            "id": b,
            "rack": None,
            "alive": True,
            "capacity": {"network_in": cap, "network_out": 4 * cap, "disk": 1e15},
        }
        for b in range(1, N_BROKERS + 1)
    ]
    parts = []
    counters: dict[int, int] = {}
    for i in range(n_partitions):
        t = int(topic[i])
        n = counters.get(t, 0)
        counters[t] = n + 1
        reps = [int(b) + 1 for b in rng.permutation(N_BROKERS - 1)[:3]]  # broker 5 empty
        parts.append(
            {
                "topic": f"topic-{t}",
                "partition": n,
                "replicas": reps,
                "leader": reps[0],
                "load": {
                    "bytes_in": float(rate[i]),
                    "bytes_out": float(rate[i] * t_fanout[t]),
                    "size": int(rate[i] * t_retention[t]),
                },
            }
        )
    return {"cluster": f"back-empty-{seed}", "brokers": brokers, "partitions": parts}


def run_case(seed: int, n_partitions: int = N_PARTITIONS) -> dict:
    snap = make_cluster(seed, n_partitions)
    t0 = time.process_time()
    pr = propose(snap)
    cpu = time.process_time() - t0
    r = pr.report
    total = sum(p["load"]["size"] * len(p["replicas"]) for p in snap["partitions"])
    lead = leader_figures(snap, pr.plan, [b["id"] for b in snap["brokers"]], THRESHOLD)
    return {
        "seed": seed,
        "balance": {
            k: (v["before"], v["after"], v["lower_bound"]) for k, v in r["balance"].items()
        },
        "movement": r["movement"],
        "leaders_reorder_bound": lead["bound"],
        "leaders_why": lead["why"],
        "bytes_share": r["movement"]["bytes_moved"] / total if total else 0.0,
        "cpu_seconds": round(cpu, 3),
    }


def print_result(res: dict) -> None:
    b = res["balance"]

    def fig(k: str, v: tuple) -> str:
        bound = v[2] if k != "leaders" else max(v[2], res["leaders_reorder_bound"])
        mark = ""
        if v[1] > THRESHOLD + 1e-9:
            mark = " OUT OF REACH" if bound > THRESHOLD + 1e-9 else " ABOVE 1.10"
        return f"{k} {v[0]:.3f}->{v[1]:.3f} (bound {bound:.3f}){mark}"

    figs = "\n         ".join(
        "  ".join(fig(k, v) for k, v in list(b.items())[i : i + 3]) for i in (0, 3)
    )
    m = res["movement"]
    nw_out = b["network_out"][1]
    mark = "ok" if nw_out <= CC_NETWORK_OUT + 1e-9 else "MISSED"
    print(
        f"seed {res['seed']:>2}: {figs}\n"
        + "".join(f"         leaders stop: {w}\n" for w in res["leaders_why"])
        + f"         network out {nw_out:.3f} vs Cruise Control {CC_NETWORK_OUT} {mark}; "
        f"replica moves {m['replica_moves']}, bytes moved {m['bytes_moved'] / 1e9:.1f} GB "
        f"({res['bytes_share']:.1%}), leadership moves {m['leadership_moves']}, "
        f"{res['cpu_seconds']:.2f} s CPU"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5, help="clusters to plan (seeds 0..N-1)")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--partitions", type=int, default=N_PARTITIONS)
    args = ap.parse_args()
    results = [run_case(s, args.partitions) for s in range(args.seeds)]
    for res in results:
        print_result(res)
    worst = max(res["balance"]["network_out"][1] for res in results)
    print(f"worst network out after: {worst:.3f} (Cruise Control {CC_NETWORK_OUT})")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
