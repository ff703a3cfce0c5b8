"""Balance figures of BALANCING.md §4: ratio, lower bound, movement, leadership."""

from __future__ import annotations

import math

import numpy as np

from .measures import DISK, LEADERS, NW_IN, NW_OUT, REPLICAS
from .model import ClusterModel
from .snapshot import Snapshot

# resources reported, and the model measure behind each
RESOURCES = {
    "network_in": NW_IN,
    "network_out": NW_OUT,
    "disk": DISK,
    "replicas": REPLICAS,
    "leaders": LEADERS,
}
COUNTS = (REPLICAS, LEADERS)


def _largest_replica(model: ClusterModel, j: int) -> float:
    if model.n_partitions == 0:
        return 0.0
    if j == NW_IN:
        return float(model.snap.bytes_in.max())
    if j == NW_OUT:
        return float(model.lout.max())  # whoever leads carries the whole leader load
    return float(model.size.max())


def resource_figures(model: ClusterModel, load: np.ndarray) -> dict[str, dict]:
    """Per resource: ideal, max and min utilisation over ideal, over the brokers it is
    shared among (usable, and for what leadership carries not demoted), of an
    assignment's per-broker `load` (measures.broker_loads)."""
    out: dict[str, dict] = {}
    for name, j in RESOURCES.items():
        u = model.sharing(j)
        x = load[u, j]
        c = model.norm[u, j] if j not in COUNTS else np.ones(x.shape[0])
        total = float(x.sum())
        ideal = total / float(c.sum()) if c.shape[0] else 0.0
        if ideal > 0:
            util = x / c
            ratio = float(util.max() / ideal)
            low = float(util.min() / ideal)
        else:
            ratio = low = 1.0
        out[name] = {
            "ratio": ratio,
            "min_ratio": low,
            "ideal": ideal,
            "capacity_based": j not in COUNTS and model.has_capacity[j],
        }
    return out


def lower_bounds(model: ClusterModel, figures_after: dict[str, dict]) -> dict[str, float]:
    """No plan can get a ratio below these: max(1, largest replica / capacity / ideal)
    for loads, ceil(ideal) / ideal for counts."""
    out: dict[str, float] = {}
    for name, j in RESOURCES.items():
        u = model.sharing(j)
        ideal = figures_after[name]["ideal"]
        if ideal <= 0:
            out[name] = 1.0
        elif j in COUNTS:
            out[name] = math.ceil(ideal - 1e-9) / ideal
        else:
            cmax = float(model.norm[u, j].max()) if u.any() else 1.0
            out[name] = max(1.0, _largest_replica(model, j) / cmax / ideal)
    return out


def movement(snap: Snapshot, final: np.ndarray) -> dict:
    """Replicas added to brokers that did not hold them, their bytes, and partitions
    whose leader changes to a broker that already held a replica."""
    init = snap.replicas
    changed = np.flatnonzero((init != final).any(axis=1))
    if changed.shape[0] == 0:
        return {
            "partitions_changed": 0,
            "replica_moves": 0,
            "bytes_moved": 0,
            "leadership_moves": 0,
        }
    old = init[changed]
    new = final[changed]
    held = (new[:, :, None] == old[:, None, :]).any(axis=2)
    added = (new >= 0) & ~held
    n_added = added.sum(axis=1)
    size = snap.size[changed]
    leader_moves = (new[:, 0] != old[:, 0]) & held[:, 0]
    return {
        "partitions_changed": int(changed.shape[0]),
        "replica_moves": int(n_added.sum()),
        "bytes_moved": int(round(float((n_added * size).sum()))),
        "leadership_moves": int(leader_moves.sum()),
    }
