"""Per-broker figures of a snapshot for readers outside the planner (BALANCING.md §3, §4).

The planner computes the same with its own model while it moves replicas; these need
no mode and no limits, only a snapshot, so pages and APIs show the planner's numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .measures import MEASURE_NAMES, load_vectors
from .measures import broker_loads as _loads_of_assignment
from .snapshot import Snapshot, parse_snapshot

# What a dead broker does not do: serve traffic or lead (it still holds its replicas'
# data and counts them).
DEAD_BROKER_ZERO = ("network_in", "network_out", "leaders", "leader_bytes_in")


def broker_loads(snapshot: Mapping[str, Any] | Snapshot) -> dict[int, dict[str, float]]:
    """Broker id -> measure -> load of the snapshot's assignment, by the load model
    (§3: the leader is replicas[0]), as it is *now*: a dead broker leads nothing (the
    first alive replica leads, as Kafka elects it) and has no traffic. Raises
    SnapshotError for a malformed snapshot."""
    snap = parse_snapshot(snapshot)
    fvec, lvec = load_vectors(snap)
    load = _loads_of_assignment(_alive_first(snap), fvec, lvec, snap.n_brokers)
    dead = ~snap.alive
    if dead.any():
        for name in DEAD_BROKER_ZERO:
            load[dead, MEASURE_NAMES.index(name)] = 0.0
    return {
        int(broker): dict(zip(MEASURE_NAMES, row, strict=True))
        for broker, row in zip(snap.broker_ids.tolist(), load.tolist(), strict=True)
    }


def balance_ratio(values: Sequence[float]) -> float | None:
    """The busiest broker over the mean (§4, without capacities); None when there is
    nothing to balance (no brokers, or nothing on them)."""
    total = sum(values)
    if not values or total <= 0:
        return None
    return max(values) / (total / len(values))


def _alive_first(snap: Snapshot) -> np.ndarray:
    """The replica lists with, in each, the first alive replica moved to the front."""
    assign = snap.replicas.copy()
    if assign.size == 0 or snap.alive.all():
        return assign
    cell_alive = (assign >= 0) & snap.alive[np.maximum(assign, 0)]
    first = np.where(cell_alive.any(axis=1), cell_alive.argmax(axis=1), 0)
    rows = np.flatnonzero(first > 0)
    f = first[rows][:, None]
    col = np.arange(assign.shape[1])[None, :]
    # column 0 takes the first alive replica, those before it shift one to the right
    src = np.where(col == 0, f, np.where(col <= f, col - 1, col))
    assign[rows] = assign[rows[:, None], src]
    return assign
