"""The disks of each broker (JBOD): each replica's log dir and every dir's bytes and
leader bytes in, on one assignment (BALANCING.md §1 "log_dirs", §5 "Disks").

Broker-level goals move replicas between brokers; a replica that stays on its broker
keeps its dir, one that arrives has none until the intra-broker goals place it. A dir
counts what the snapshot says its replicas hold: replicas whose dir is unknown stay
where they are and count in no dir. A dir takes replicas when it is online and not
being removed (`remove-disks`); what sits in any other dir must leave it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .measures import DISK
from .snapshot import Snapshot

# Which replicas the intra-broker goals may move between dirs, per mode: every one
# ("all", full rebalances) or only those that must move or arrive ("needed").
DISK_MOVES_ALL = "all"
DISK_MOVES_NEEDED = "needed"
DISK_MOVES_NONE = "none"


def slots_before(initial: np.ndarray, assign: np.ndarray) -> np.ndarray:
    """(P, K) the slot in `initial` of each replica of `assign` on the same broker, -1
    where that broker did not hold the partition."""
    out = np.full(assign.shape, -1, dtype=np.int32)
    K = assign.shape[1]
    # column by column: numpy's any/argmax(axis=1) over a few columns is slow; the
    # last write is the first slot that matches
    for k in range(K):
        a = assign[:, k]
        here = out[:, k]
        for j in reversed(range(K)):
            i = initial[:, j]
            here[(a == i) & (i >= 0)] = j
        here[a < 0] = -1
    return out


def usable_dir_capacity(snap: Snapshot, removed: np.ndarray | None) -> np.ndarray:
    """(B,) bytes the online dirs not being removed hold in all (NaN: a broker that
    lists no dirs, or a usable dir of unknown size)."""
    b = snap.n_brokers
    if snap.log_dir_total is None or snap.log_dir_online is None:
        return np.full(b, np.nan)
    usable = snap.log_dir_online.copy()
    if removed is not None:
        usable &= ~removed
    total = np.where(usable, snap.log_dir_total, 0.0)
    listed = np.array([bool(paths) for paths in snap.log_dirs or [[]] * b])
    known = ~np.isnan(total).any(axis=1)
    return np.where(listed & known, np.nan_to_num(total).sum(axis=1), np.nan)


def disk_capacity_applied(snap: Snapshot, removed: np.ndarray | None) -> Snapshot:
    """`snap` with each broker's disk capacity at most what its usable dirs hold, so
    the broker-level goals move out what those dirs cannot take."""
    dirs = usable_dir_capacity(snap, removed)
    if np.isnan(dirs).all():
        return snap
    capacity = snap.capacity.copy()
    capacity[:, DISK] = np.fmin(capacity[:, DISK], dirs)
    return replace(snap, capacity=capacity)


class DiskModel:
    """Each replica's dir on an assignment, and per dir: bytes held, leader bytes in."""

    def __init__(
        self,
        snap: Snapshot,
        assign: np.ndarray,
        *,
        removed: np.ndarray | None,
        capacity_threshold: float,
        moves: str,
    ) -> None:
        assert snap.log_dir_total is not None and snap.log_dir_online is not None
        self.snap = snap
        self.moves = moves
        total = snap.log_dir_total
        listed = np.array([bool(paths) for paths in snap.log_dirs or []], dtype=bool)
        self.takes = snap.log_dir_online & listed[:, None] & ~(total <= 0)
        if removed is not None:
            self.takes &= ~removed
        # A dir of unknown size has no limit and weighs as its broker's known dirs do
        # on average (all alike when none is known).
        known = ~np.isnan(total)
        counted = known.sum(axis=1, keepdims=True)
        summed = np.where(known, total, 0.0).sum(axis=1, keepdims=True)
        typical = np.divide(summed, counted, out=np.ones_like(summed), where=counted > 0)
        self.total = np.where(known, total, typical)
        self.limit = np.where(
            self.takes, np.where(known, self.total * capacity_threshold, np.inf), 0.0
        )
        self.listed = listed
        initial = snap.replicas
        known = snap.replica_dir if snap.replica_dir is not None else np.full(initial.shape, -1)
        initial_dir = np.where(initial >= 0, known, -1).astype(np.int32)
        self.assign = assign
        before = slots_before(initial, assign)
        # held before on the same broker (its dir known or not): a replica that arrives
        # is not `stayed`, and is placed in a dir
        self.stayed = before >= 0
        rows = np.arange(assign.shape[0])[:, None]
        self.dir = np.where(self.stayed, initial_dir[rows, np.maximum(before, 0)], -1)
        self.carried = self.dir.copy()
        cells = assign >= 0
        broker = np.maximum(assign, 0)
        # a partition with a replica on a dead broker can't be listed in a plan
        whole = snap.alive[broker[:, 0]] | ~cells[:, 0]
        for k in range(1, assign.shape[1]):
            whole &= snap.alive[broker[:, k]] | ~cells[:, k]
        in_bad_dir = (self.dir >= 0) & ~self.takes[broker, np.maximum(self.dir, 0)]
        open_cells = cells & whole[:, None] & listed[broker]
        self.must_move = open_cells & ((~self.stayed) | in_bad_dir)
        if moves == DISK_MOVES_ALL:
            self.can_move = open_cells
        elif moves == DISK_MOVES_NEEDED:
            self.can_move = self.must_move.copy()
        else:
            self.can_move = np.zeros_like(cells)
            self.must_move = np.zeros_like(cells)
        self.size = snap.size
        self.leader_bytes = snap.bytes_in
        self.used = np.zeros(total.shape)
        self.lead = np.zeros(total.shape)
        self.moves_made = 0
        self._broker_cells: dict[int, tuple[np.ndarray, np.ndarray]] | None = None
        self._recount()

    def _recount(self) -> None:
        b, d = self.total.shape
        # the placed cells by flat index, in the order of np.nonzero: take() there
        # reads them several times faster than indexing by (partition, slot)
        cell = np.flatnonzero(self.dir >= 0)
        p, k = np.divmod(cell, self.dir.shape[1])
        flat = self.assign.take(cell).astype(np.int64) * d + self.dir.take(cell)
        self.used = np.bincount(flat, weights=self.size.take(p), minlength=b * d).reshape(b, d)
        lead = np.flatnonzero(k == 0)
        self.lead = np.bincount(
            flat.take(lead), weights=self.leader_bytes.take(p.take(lead)), minlength=b * d
        ).reshape(b, d)

    def move(self, p: int, k: int, to: int) -> None:
        """Put replica (p, k) in dir `to` of its broker."""
        b = int(self.assign[p, k])
        was = int(self.dir[p, k])
        size = float(self.size[p])
        lead = float(self.leader_bytes[p]) if k == 0 else 0.0
        if was >= 0:
            self.used[b, was] -= size
            self.lead[b, was] -= lead
        self.used[b, to] += size
        self.lead[b, to] += lead
        self.dir[p, k] = to
        self.moves_made += 1

    def move_many(self, ps: np.ndarray, ks: np.ndarray, to: np.ndarray) -> None:
        """`move` for many replicas of one broker at once."""
        if ps.shape[0] == 0:
            return
        b = int(self.assign[ps[0], ks[0]])
        was = self.dir[ps, ks]
        size = self.size[ps]
        lead = np.where(ks == 0, self.leader_bytes[ps], 0.0)
        there = was >= 0
        np.subtract.at(self.used[b], was[there], size[there])
        np.subtract.at(self.lead[b], was[there], lead[there])
        np.add.at(self.used[b], to, size)
        np.add.at(self.lead[b], to, lead)
        self.dir[ps, ks] = to
        self.moves_made += int(ps.shape[0])

    def flat(self, ps: np.ndarray, ks: np.ndarray) -> np.ndarray:
        """The place of each cell (ps[i], ks[i]) in the flattened (P, K) arrays: take()
        there reads a broker's cells several times faster than indexing by pairs."""
        return ps.astype(np.int64) * self.dir.shape[1] + ks

    def unplaced_bytes(self) -> float:
        """Bytes of replicas that must be in a dir taking replicas and are not."""
        cells = self.must_move & (
            (self.dir < 0) | ~self.takes[np.maximum(self.assign, 0), np.maximum(self.dir, 0)]
        )
        return float((self.size[:, None] * cells).sum())

    def changed(self) -> np.ndarray:
        """(P, K) replicas the plan puts in a dir they are not in now (arrivals
        included)."""
        return (self.dir >= 0) & (self.dir != self.carried)

    def broker_cells(self) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """{broker: (partitions, slots)} of every replica on a broker that lists dirs
        (found once: the assignment is fixed)."""
        if self._broker_cells is None:
            self._broker_cells = self._group_cells()
        return self._broker_cells

    def _group_cells(self) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        p, k = np.nonzero(self.assign >= 0)
        b = self.assign[p, k]
        keep = self.listed[b]
        p, k, b = p[keep], k[keep], b[keep]
        n_brokers = self.total.shape[0]
        # int16 keys let numpy use a linear-time radix sort
        order = np.argsort(b.astype(np.int16) if n_brokers < 32000 else b, kind="stable")
        # compact: kept for the life of the model
        p, k, b = p[order].astype(np.int32), k[order].astype(np.int16), b[order]
        starts = np.searchsorted(b, np.arange(n_brokers + 1))
        return {
            int(x): (p[starts[x] : starts[x + 1]], k[starts[x] : starts[x + 1]])
            for x in np.flatnonzero(np.diff(starts))
        }

    def shares(self, measure: np.ndarray) -> np.ndarray:
        """(B, D) each dir's share of its broker's `measure` (`used` or `lead`) by its
        size, over brokers with two or more dirs taking replicas; 0 elsewhere."""
        takes = self.takes & (self.takes.sum(axis=1) > 1)[:, None]
        size = np.where(takes, self.total, 0.0)
        whole = size.sum(axis=1, keepdims=True)
        held = np.where(takes, measure, 0.0).sum(axis=1, keepdims=True)
        return np.divide(size * held, whole, out=np.zeros_like(size), where=whole > 0)

    def utilisation(self) -> np.ndarray:
        """(B, D) used / total of the dirs taking replicas, NaN for the others."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.takes, self.used / np.where(self.total > 0, self.total, 1), np.nan)
