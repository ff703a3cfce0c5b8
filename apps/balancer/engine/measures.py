"""The load model's measures (BALANCING.md §3): what each replica adds to its broker.

Measures tracked per broker (columns of `ClusterModel.load`):

    network_in       + bytes_in on every replica
    network_out      + bytes_out + bytes_in * (rf - 1) on the leader (replicas[0])
    disk             + size on every replica
    replicas         + 1 on every replica
    leaders          + 1 on the leader
    leader_bytes_in  + bytes_in on the leader
"""

from __future__ import annotations

import numpy as np

from .snapshot import Snapshot

NW_IN, NW_OUT, DISK, REPLICAS, LEADERS, LEADER_BYTES_IN = range(6)
N_MEASURES = 6
MEASURE_NAMES = ("network_in", "network_out", "disk", "replicas", "leaders", "leader_bytes_in")
# Measures a change of leadership moves between brokers.
LEADER_MEASURES = (NW_OUT, LEADERS, LEADER_BYTES_IN)


def load_vectors(snap: Snapshot) -> tuple[np.ndarray, np.ndarray]:
    """Per partition, what each replica adds to its broker and what the leader adds
    in addition: (P, N_MEASURES) arrays `fvec` and `lvec`."""
    n = snap.n_partitions
    fvec = np.zeros((n, N_MEASURES), dtype=np.float64)
    fvec[:, NW_IN] = snap.bytes_in
    fvec[:, DISK] = snap.size
    fvec[:, REPLICAS] = 1.0
    lvec = np.zeros((n, N_MEASURES), dtype=np.float64)
    lvec[:, NW_OUT] = snap.bytes_out + snap.bytes_in * (snap.rf - 1)
    lvec[:, LEADERS] = 1.0
    lvec[:, LEADER_BYTES_IN] = snap.bytes_in
    return fvec, lvec


def broker_loads(
    assign: np.ndarray, fvec: np.ndarray, lvec: np.ndarray, n_brokers: int
) -> np.ndarray:
    """Per-broker measures of an assignment (column 0 of `assign` is the leader)."""
    load = np.zeros((n_brokers, N_MEASURES), dtype=np.float64)
    measure = np.arange(N_MEASURES)
    for k in range(assign.shape[1]):
        col = assign[:, k]
        ok = col >= 0
        w = fvec + lvec if k == 0 else fvec
        if not ok.all():
            col, w = col[ok], w[ok]
        # one count over (broker, measure) cells: each cell still adds its partitions'
        # weights in partition order, as a count per measure would
        cell = (col.astype(np.int64)[:, None] * N_MEASURES + measure).ravel()
        counts = np.bincount(cell, weights=w.ravel(), minlength=n_brokers * N_MEASURES)
        load += counts.reshape(n_brokers, N_MEASURES)
    return load
