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
    ids = snap.broker_ids
    parts = []
    for p in changed.tolist():
        rf = int(snap.rf[p])
        row = final[p, :rf]
        replicas = [int(ids[b]) for b in row.tolist()]
        # the plan must be valid by construction; fail loudly rather than emit a bad one
        if len(set(replicas)) != rf or (row < 0).any() or not snap.alive[row].all():
            raise PlanError(
                f"internal error: invalid replica list {replicas} for {snap.partition_name(p)}"
            )
        parts.append(
            {
                "topic": snap.topics[snap.topic[p]],
                "partition": int(snap.partition[p]),
                "replicas": replicas,
            }
        )
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
