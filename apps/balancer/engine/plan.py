"""The plan: the net difference between the starting and the final assignment,
as exactly the JSON kafka-reassign-partitions.sh accepts (BALANCING.md §2)."""

from __future__ import annotations

import numpy as np

from .errors import PlanError
from .snapshot import Snapshot


def changed_partitions(initial: np.ndarray, final: np.ndarray) -> np.ndarray:
    """Partitions whose replica list (order included) differs."""
    return np.flatnonzero((initial != final).any(axis=1))


def build_plan(snap: Snapshot, final: np.ndarray, usable: np.ndarray) -> dict:
    changed = changed_partitions(snap.replicas, final)
    rows = final[changed]
    rf = snap.rf[changed]
    real = np.arange(rows.shape[1])[None, :] < rf[:, None]
    # the plan must be valid by construction (BALANCING.md §2): fail loudly rather than
    # emit a bad one
    bad = (real & ((rows < 0) | ~snap.alive[np.maximum(rows, 0)])).any(axis=1)
    srt = np.sort(np.where(real, rows, -1 - np.arange(rows.shape[1])[None, :]), axis=1)
    bad |= (srt[:, 1:] == srt[:, :-1]).any(axis=1)
    if bad.any():
        p = int(changed[np.argmax(bad)])
        raise PlanError(
            f"internal error: invalid replica list {final[p].tolist()} for {snap.partition_name(p)}"
        )
    ids = np.where(real, snap.broker_ids[np.maximum(rows, 0)], 0).tolist()
    topics = snap.topics
    parts = [
        {"topic": topics[t], "partition": n, "replicas": r[:k]}
        for t, n, r, k in zip(
            snap.topic[changed].tolist(),
            snap.partition[changed].tolist(),
            ids,
            rf.tolist(),
            strict=True,
        )
    ]
    return {"version": 1, "partitions": parts}


def validate_plan(plan: dict, snapshot: dict) -> list[str]:
    """Check a plan against a raw snapshot by the rules of BALANCING.md §2.

    Returns the problems found (empty when valid). Used by tests and callers that
    receive a plan from elsewhere."""
    problems: list[str] = []
    if set(plan) != {"version", "partitions"} or plan.get("version") != 1:
        return ["plan must be exactly {'version': 1, 'partitions': [...]}"]
    alive = {b["id"]: b.get("alive", True) for b in snapshot["brokers"]}
    current = {(p["topic"], p["partition"]): p["replicas"] for p in snapshot["partitions"]}
    seen = set()
    for entry in plan["partitions"]:
        if set(entry) != {"topic", "partition", "replicas"}:
            problems.append(f"entry {entry} must have exactly topic, partition, replicas")
            continue
        key = (entry["topic"], entry["partition"])
        name = f"{key[0]}-{key[1]}"
        if key in seen:
            problems.append(f"{name} listed twice")
        seen.add(key)
        if key not in current:
            problems.append(f"{name} is not in the snapshot")
            continue
        reps = entry["replicas"]
        if len(reps) != len(current[key]):
            problems.append(f"{name}: replica count changes")
        if len(set(reps)) != len(reps):
            problems.append(f"{name}: replicas are not distinct")
        for r in reps:
            if r not in alive:
                problems.append(f"{name}: broker {r} does not exist")
            elif not alive[r]:
                problems.append(f"{name}: broker {r} is not alive")
        if list(reps) == list(current[key]):
            problems.append(f"{name}: listed but unchanged")
    return problems
