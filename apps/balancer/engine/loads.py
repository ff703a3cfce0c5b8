"""Per-broker figures of a snapshot for readers outside the planner (BALANCING.md §3, §4).

The planner computes the same with its own model while it moves replicas; these need
no mode and no limits, only a snapshot, so pages and APIs show the planner's numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .model import MEASURE_NAMES, load_vectors
from .model import broker_loads as _loads_of_assignment
from .snapshot import Snapshot, parse_snapshot


def broker_loads(snapshot: Mapping[str, Any] | Snapshot) -> dict[int, dict[str, float]]:
    """Broker id -> measure -> load of the snapshot's assignment, by the load model
    (§3: the leader is replicas[0]). Raises SnapshotError for a malformed snapshot."""
    snap = parse_snapshot(snapshot)
    fvec, lvec = load_vectors(snap)
    load = _loads_of_assignment(snap.replicas, fvec, lvec, snap.n_brokers)
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
