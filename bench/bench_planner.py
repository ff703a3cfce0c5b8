"""Benchmark of the balancer engine on generated, skewed clusters.

    .venv/bin/python bench/bench_planner.py                  # small and large
    .venv/bin/python bench/bench_planner.py --size small     # 100 brokers, 50k partitions
    .venv/bin/python bench/bench_planner.py --size large     # 270 brokers, 433k partitions
    .venv/bin/python bench/bench_planner.py --threshold 1.10 --json out.json
    .venv/bin/python bench/bench_planner.py --size large --log-dirs 4   # JBOD, skewed

With --log-dirs N every broker has N equal log dirs and half of each broker's
replicas sit in its first one (--disk-skew): the plan levels brokers and dirs at once,
and the figures of each broker's dirs are printed beside the brokers'.

Each size runs in its own process so that peak memory (ru_maxrss) is that size's
alone. Clusters come from a fixed seed: the same command prints the same moves.
Time is wall time of `propose()` from the snapshot dict (parse and validate,
optimise, build plan and report); generation of the dict is not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from devkit.jbod_snapshot import dirs_add  # noqa: E402

from apps.balancer.engine import PlannerOptions, propose  # noqa: E402

SIZES = {
    "tiny": {"brokers": 20, "partitions": 2_000},
    "small": {"brokers": 100, "partitions": 50_000},
    "large": {"brokers": 270, "partitions": 433_000},
}
# the targets: ratio within 1.05 x ideal for these
TARGET_RESOURCES = ("network_in", "network_out", "replicas")


def make_cluster(n_brokers: int, n_partitions: int, *, rf: int = 3, seed: int = 42) -> dict:
    """A skewed cluster: uneven broker weights (a few hot brokers, a few nearly empty
    ones just added), heavy-tailed topic sizes and rates, mixed retention."""
    rng = np.random.default_rng(seed)
    n_racks = 6
    rack = np.arange(n_brokers) % n_racks

    # topics with heavy-tailed partition counts
    counts: list[int] = []
    while sum(counts) < n_partitions:
        counts.append(int(np.clip(rng.lognormal(3.0, 1.2), 1, 3000)))
    counts[-1] -= sum(counts) - n_partitions
    if counts[-1] <= 0:
        counts.pop()
    n_topics = len(counts)
    topic_of = np.repeat(np.arange(n_topics), counts)
    part_no = np.concatenate([np.arange(c) for c in counts])
    t_rate = rng.lognormal(np.log(150_000), 1.4, n_topics)  # bytes/s per partition
    t_rate[rng.random(n_topics) < 0.1] = 0.0  # idle topics
    t_fanout = rng.choice([0.0, 1.0, 1.0, 2.0, 3.0], n_topics)
    t_retention = rng.choice([3600.0, 6 * 3600.0, 86400.0, 3 * 86400.0, 7 * 86400.0], n_topics)
    mult = rng.lognormal(0.0, 0.4, n_partitions)
    bytes_in = t_rate[topic_of] * mult
    bytes_out = bytes_in * t_fanout[topic_of] * rng.uniform(0.8, 1.2, n_partitions)
    size = bytes_in * t_retention[topic_of] * rng.uniform(0.7, 1.3, n_partitions)
    idle = bytes_in == 0
    size[idle] = rng.lognormal(np.log(2e8), 1.0, int(idle.sum()))
    messages = bytes_in / 1024.0

    # skewed broker weights: a few hot brokers, a few nearly empty new ones
    weight = rng.lognormal(0.0, 0.25, n_brokers)
    hot = rng.choice(n_brokers, max(1, n_brokers // 20), replace=False)
    weight[hot] *= 1.6
    others = np.setdiff1d(np.arange(n_brokers), hot)
    cold = rng.choice(others, max(1, n_brokers // 30), replace=False)
    weight[cold] *= 0.05
    # rf distinct racks per partition, then a broker inside each rack by weight
    rack_pick = np.argsort(rng.random((n_partitions, n_racks)), axis=1)[:, :rf]
    replicas = np.empty((n_partitions, rf), dtype=np.int64)
    for r in range(n_racks):
        members = np.flatnonzero(rack == r)
        cum = np.cumsum(weight[members])
        cum /= cum[-1]
        where = rack_pick == r
        replicas[where] = members[np.searchsorted(cum, rng.random(int(where.sum())))]
    # leaders skewed too: the heaviest broker of the set leads half the time
    heavy_first = rng.random(n_partitions) < 0.5
    lead = np.argmax(weight[replicas], axis=1)
    rows = np.flatnonzero(heavy_first)
    first = replicas[rows, 0].copy()
    replicas[rows, 0] = replicas[rows, lead[rows]]
    replicas[rows, lead[rows]] = first

    # capacities: the ideal sits at 40-45 % so hot brokers break the 80 % limit
    lout = bytes_out + bytes_in * (rf - 1)
    cap_in = float(np.ceil(bytes_in.sum() * rf / n_brokers / 0.40 / 1e6) * 1e6)
    cap_out = float(np.ceil(lout.sum() / n_brokers / 0.40 / 1e6) * 1e6)
    cap_disk = float(np.ceil(size.sum() * rf / n_brokers / 0.45 / 1e9) * 1e9)
    brokers = [
        {
            "id": b + 1,
            "rack": f"rack-{rack[b]}",
            "alive": True,
            "capacity": {"network_in": cap_in, "network_out": cap_out, "disk": cap_disk},
        }
        for b in range(n_brokers)
    ]
    ids = (replicas + 1).tolist()
    bi, bo, mi, sz = bytes_in.tolist(), bytes_out.tolist(), messages.tolist(), size.tolist()
    tl, pn = topic_of.tolist(), part_no.tolist()
    partitions = [
        {
            "topic": f"topic-{tl[i]:05d}",
            "partition": pn[i],
            "replicas": ids[i],
            "leader": ids[i][0],
            "load": {
                "bytes_in": bi[i],
                "bytes_out": bo[i],
                "messages_in": mi[i],
                "size": int(sz[i]),
            },
        }
        for i in range(n_partitions)
    ]
    return {"cluster": f"bench-{n_brokers}", "brokers": brokers, "partitions": partitions}


def min_count_moves(snap: dict, threshold: float) -> int:
    """Replica moves any plan needs just to bring replica counts into their band:
    a yardstick for the movement figure."""
    counts: dict[int, int] = {b["id"]: 0 for b in snap["brokers"] if b["alive"]}
    for p in snap["partitions"]:
        for r in p["replicas"]:
            counts[r] += 1
    c = np.array(list(counts.values()), dtype=np.float64)
    ideal = c.sum() / c.shape[0]
    hi = max(np.ceil(ideal), np.floor(ideal * threshold))
    lo = min(np.floor(ideal), np.ceil(ideal * (2 - threshold)))
    return int(max(np.maximum(c - hi, 0).sum(), np.maximum(lo - c, 0).sum()))


def run_one(size: str, threshold: float, mode: str, log_dirs: int = 0, skew: float = 0.5) -> dict:
    spec = SIZES[size]
    t0 = time.perf_counter()
    snap = make_cluster(spec["brokers"], spec["partitions"])
    if log_dirs:
        dirs_add(snap, dirs=log_dirs, skew=skew)
    gen = time.perf_counter() - t0
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    options = PlannerOptions(balance_threshold=threshold)
    t0 = time.perf_counter()
    c0 = time.process_time()
    proposal = propose(snap, mode=mode, options=options)
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    r = proposal.report
    total_bytes = sum(p["load"]["size"] * len(p["replicas"]) for p in snap["partitions"])
    return {
        "min_count_moves": min_count_moves(snap, threshold),
        "bytes_share": r["movement"]["bytes_moved"] / total_bytes if total_bytes else 0.0,
        "size": size,
        "brokers": spec["brokers"],
        "partitions": spec["partitions"],
        "replicas": r["replicas"],
        "threshold": threshold,
        "mode": mode,
        "generate_s": round(gen, 2),
        "seconds": round(elapsed, 2),
        "cpu_seconds": round(cpu, 2),
        "phases": r["seconds"],
        "peak_rss_mib": round(peak),
        "rss_before_plan_mib": round(rss_before),
        "balance": r["balance"],
        "log_dirs": log_dirs,
        "disks": {k: v for k, v in r.get("disks", {}).items() if k != "brokers"},
        "movement": r["movement"],
        "goals": [
            {
                k: g[k]
                for k in (
                    "name",
                    "violation_before",
                    "violation_after",
                    "replica_moves",
                    "leadership_moves",
                    "swaps",
                    "seconds",
                )
            }
            | {"disk_moves": g.get("disk_moves", 0)}
            for g in r["goals"]
        ],
    }


def print_result(res: dict) -> None:
    m = res["movement"]
    print(
        f"\n== {res['size']}: {res['brokers']} brokers, {res['partitions']:,} partitions, "
        f"{res['replicas']:,} replicas, mode {res['mode']}, threshold {res['threshold']}"
    )
    ph = res["phases"]
    print(
        f"time {res['seconds']:.2f} s wall, {res['cpu_seconds']:.2f} s CPU "
        f"(parse {ph.get('parse', 0):.2f} s, optimise {ph.get('optimize', 0):.2f} s), "
        f"peak RSS {res['peak_rss_mib']} MiB (snapshot dict alone {res['rss_before_plan_mib']} MiB)"
    )
    checked = res["threshold"] <= 1.05  # above it the planner stops at its threshold
    print(
        f"{'resource':<12} {'before':>8} {'after':>8} {'bound':>8}  "
        + ("target 1.05" if checked else f"(threshold {res['threshold']}: 1.05 not checked)")
    )
    for name, b in res["balance"].items():
        mark = ""
        if name in TARGET_RESOURCES and checked:
            ok = b["after"] <= max(1.05, b["lower_bound"]) + 1e-9
            mark = "ok" if ok else "MISSED"
        print(f"{name:<12} {b['before']:>8.3f} {b['after']:>8.3f} {b['lower_bound']:>8.3f}  {mark}")
    disks = res.get("disks")
    if disks:
        u, lb = disks["usage_ratio"], disks["leader_bytes_in_ratio"]
        print(
            f"disks ({res['log_dirs']} per broker; a dir against its broker's mean, worst):"
            f" use {u['before']:.3f} -> {u['after']:.3f}, leaders' bytes in "
            f"{lb['before']:.3f} -> {lb['after']:.3f}; {disks['moves_between_dirs']:,} "
            f"replicas to another dir of their broker "
            f"({disks['bytes_between_dirs'] / 1e12:.2f} TB)"
        )
    print(
        f"replica moves {m['replica_moves']:,} ({m.get('given_back', 0):,} given back), "
        f"bytes moved {m['bytes_moved'] / 1e12:.2f} TB ({res['bytes_share']:.2%} of all), "
        f"leadership moves {m['leadership_moves']:,}, "
        f"partitions changed {m['partitions_changed']:,}"
    )
    print(
        f"(any plan needs at least {res['min_count_moves']:,} replica moves just to bring "
        f"replica counts within {res['threshold']} x ideal)"
    )
    for g in res["goals"]:
        if g["replica_moves"] or g["leadership_moves"] or g["violation_before"]:
            dirs = f", to other dirs {g['disk_moves']}" if g.get("disk_moves") else ""
            print(
                f"  {g['name']:<30} violation {g['violation_before']:.4g} -> "
                f"{g['violation_after']:.4g}, moves {g['replica_moves']}, "
                f"leadership {g['leadership_moves']}, swaps {g['swaps']}{dirs}, "
                f"{g['seconds']:.2f} s"
            )


def calibration_seconds() -> float:
    """CPU seconds of the issue's calibration loop, in a process of its own."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import time; t = time.process_time(); sum(i*i for i in range(5_000_000)); "
            "print(time.process_time() - t)",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--size", choices=[*SIZES, "all"], default="all", help="all = small and large")
    ap.add_argument(
        "--threshold",
        type=float,
        default=1.05,
        help="balance threshold of every distribution goal (default 1.05, the "
        "issue's target; the planner's own default is 1.10)",
    )
    ap.add_argument("--mode", default="full")
    ap.add_argument("--log-dirs", type=int, default=0, help="log dirs per broker (JBOD)")
    ap.add_argument(
        "--disk-skew", type=float, default=0.5, help="share of replicas in each first dir"
    )
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(
            json.dumps(run_one(args.size, args.threshold, args.mode, args.log_dirs, args.disk_skew))
        )
        return
    sizes = ["small", "large"] if args.size == "all" else [args.size]
    results = []
    for size in sizes:
        calibration = calibration_seconds()
        cmd = [
            sys.executable,
            __file__,
            "--one",
            "--size",
            size,
            "--threshold",
            str(args.threshold),
            "--mode",
            args.mode,
            "--log-dirs",
            str(args.log_dirs),
            "--disk-skew",
            str(args.disk_skew),
        ]
        out = subprocess.run(
            cmd,
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        res = json.loads(out.stdout.strip().splitlines()[-1])
        res["calibration_s"] = round(min(calibration, calibration_seconds()), 3)
        print_result(res)
        print(
            f"calibration `sum(i*i for i in range(5_000_000))`: {res['calibration_s']:.3f} s CPU;"
            f" the plan's CPU is {res['cpu_seconds'] / res['calibration_s']:.0f} x that"
        )
        results.append(res)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
