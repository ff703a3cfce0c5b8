"""Snapshot builders and an independent re-implementation of the load model
(BALANCING.md §3) to check the engine's plans against."""

from __future__ import annotations

import math
from collections import defaultdict

MiB = 1024 * 1024
RESOURCES = ("network_in", "network_out", "disk")


def broker(bid: int, rack: str | None = None, alive: bool = True, **capacity: float) -> dict:
    b: dict = {"id": bid, "rack": rack, "alive": alive}
    if capacity:
        b["capacity"] = capacity
    return b


def part(
    topic: str,
    n: int,
    replicas: list[int],
    *,
    bytes_in: float = 0.0,
    bytes_out: float = 0.0,
    size: float = 0.0,
    leader: int | None = None,
) -> dict:
    return {
        "topic": topic,
        "partition": n,
        "replicas": list(replicas),
        "leader": replicas[0] if leader is None else leader,
        "load": {"bytes_in": bytes_in, "bytes_out": bytes_out, "messages_in": 0.0, "size": size},
    }


def snapshot(brokers: list[dict], partitions: list[dict]) -> dict:
    return {
        "cluster": "test",
        "taken_at": "2026-11-22T04:00:00Z",
        "brokers": brokers,
        "partitions": partitions,
    }


def apply_plan(snap: dict, plan: dict) -> dict:
    """The snapshot as it would be once the plan is executed (leader = replicas[0])."""
    new = {(e["topic"], e["partition"]): e["replicas"] for e in plan["partitions"]}
    parts = []
    for p in snap["partitions"]:
        reps = new.get((p["topic"], p["partition"]), p["replicas"])
        parts.append({**p, "replicas": list(reps), "leader": reps[0]})
    return {**snap, "partitions": parts}


def assignment(snap: dict) -> dict[tuple[str, int], list[int]]:
    return {(p["topic"], p["partition"]): list(p["replicas"]) for p in snap["partitions"]}


def broker_loads(snap: dict) -> dict[int, dict[str, float]]:
    """Per broker: network_in, network_out, disk, replicas, leaders (leader = replicas[0])."""
    out: dict[int, dict[str, float]] = {b["id"]: defaultdict(float) for b in snap["brokers"]}
    for p in snap["partitions"]:
        load = p.get("load") or {}
        bi = float(load.get("bytes_in", 0.0))
        bo = float(load.get("bytes_out", 0.0))
        sz = float(load.get("size", 0.0))
        reps = p["replicas"]
        for r in reps:
            out[r]["network_in"] += bi
            out[r]["disk"] += sz
            out[r]["replicas"] += 1
        lead = out[reps[0]]
        lead["network_out"] += bo + bi * (len(reps) - 1)
        lead["leaders"] += 1
    return out


def usable_ids(snap: dict, removed: tuple[int, ...] = ()) -> list[int]:
    return [b["id"] for b in snap["brokers"] if b.get("alive", True) and b["id"] not in removed]


def racks_of(snap: dict) -> dict[int, str]:
    # a broker without rack is a rack of its own
    return {
        b["id"]: b["rack"] if b.get("rack") is not None else f"__{b['id']}" for b in snap["brokers"]
    }


def rack_violation(snap: dict, replicas: list[int], removed: tuple[int, ...] = ()) -> int:
    racks = racks_of(snap)
    n_racks = len({racks[b] for b in usable_ids(snap, removed)}) or 1
    rf = len(replicas)
    m = 1 if n_racks >= rf else math.ceil(rf / n_racks)
    count: dict[str, int] = defaultdict(int)
    for r in replicas:
        count[racks[r]] += 1
    return sum(max(0, c - m) for c in count.values())


def ratio(snap: dict, resource: str, removed: tuple[int, ...] = ()) -> float:
    """max utilisation / ideal over usable brokers (raw load when no capacity)."""
    loads = broker_loads(snap)
    caps = {b["id"]: (b.get("capacity") or {}).get(resource) for b in snap["brokers"]}
    ids = usable_ids(snap, removed)
    use_cap = resource in RESOURCES and all(caps[b] for b in ids)
    c = {b: caps[b] if use_cap else 1.0 for b in ids}
    total = sum(loads[b][resource] for b in ids)
    if total == 0:
        return 1.0
    ideal = total / sum(c.values())
    return max(loads[b][resource] / c[b] for b in ids) / ideal


def overloaded_snapshot() -> dict:
    """A cluster no plan can fully balance: 270 units of network in over 3 x 100 (90 %,
    above the 80 % capacity limit); dead broker 4's replica of `big-0` fits on no alive
    broker under the disk limit; `lost-0` has its only replica on broker 4."""
    cap = {"network_in": 100.0, "disk": 100.0}
    return snapshot(
        [broker(b, **cap) for b in (1, 2, 3)] + [broker(4, alive=False, **cap)],
        [part("t", i, [1], bytes_in=10.0) for i in range(15)]
        + [part("t", 15 + i, [2 + i % 2], bytes_in=10.0) for i in range(12)]
        + [part("big", 0, [1, 4], size=90.0), part("lost", 0, [4], size=1.0)],
    )
