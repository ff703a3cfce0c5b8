"""Disks (JBOD) for a generated snapshot: every broker gets equal log dirs and each
replica one of them, a share of them piled into each broker's first dir (the skew a
planner must undo). Used by the engine's tests and bench/bench_planner.py."""

from __future__ import annotations

import numpy as np


def dirs_add(snapshot: dict, *, dirs: int, skew: float, seed: int = 5) -> dict:
    """`snapshot` (BALANCING.md §1, changed in place and returned) with `dirs` log dirs
    per broker, each 1/dirs of the broker's disk capacity (else of 1 TB), and each
    replica in its first dir with probability `skew`, else in one picked at random."""
    rng = np.random.default_rng(seed)
    for broker in snapshot["brokers"]:
        disk = (broker.get("capacity") or {}).get("disk") or 10**12
        broker["log_dirs"] = [
            {"path": f"/data/{d}", "total": int(disk / dirs), "usable": int(disk / dirs)}
            for d in range(dirs)
        ]
    for partition in snapshot["partitions"]:
        n = len(partition["replicas"])
        picked = rng.integers(0, dirs, n)
        piled = rng.random(n) < skew
        partition["log_dirs"] = [
            f"/data/{0 if p else d}" for d, p in zip(picked, piled, strict=True)
        ]
    return snapshot
