"""Soft goal: the dirs of each broker equally used.

A dir is balanced when its utilisation (bytes / size) lies within [(2 - t) x m, t x m],
m being its broker's utilisation over the dirs that take replicas and t the goal's
threshold. The dir used most hands the dir used least the replica that brings both
nearest their broker's mean, as long as that narrows the spread and keeps every dir
under its capacity limit.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

import numpy as np

from ..disks import DISK_MOVES_ALL, DiskModel
from ..model import ClusterModel
from ..sorting import stable_argsort
from .intra_broker import DiskGoal, dir_offender

MAX_MOVES_PER_DIR = 64  # a broker's levelling stops after this many moves per dir


def dir_band(disks: DiskModel, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(B,) the utilisation band of each broker's dirs."""
    takes = disks.takes
    held = np.where(takes, disks.used, 0.0).sum(axis=1)
    size = np.where(takes, disks.total, 0.0).sum(axis=1)
    mean = np.divide(held, size, out=np.zeros_like(held), where=size > 0)
    return (2.0 - threshold) * mean, threshold * mean


class IntraBrokerDiskUsageDistributionGoal(DiskGoal):
    name = "intra-broker-disk-usage-distribution"
    hard = False

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold

    def _outside(self, disks: DiskModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lo, hi = dir_band(disks, self.threshold)
        util = np.nan_to_num(disks.utilisation(), nan=0.0)
        # a broker with one dir taking replicas has nothing to spread
        spread = disks.takes & (disks.takes.sum(axis=1) > 1)[:, None]
        above = np.where(spread, np.maximum(util - hi[:, None], 0.0), 0.0)
        below = np.where(spread, np.maximum(lo[:, None] - util, 0.0), 0.0)
        return above, below, util

    def disk_violation(self, disks: DiskModel) -> float:
        above, below, _ = self._outside(disks)
        return float(above.sum() + below.sum())

    def disk_offenders(self, disks: DiskModel) -> list[tuple[float, dict]]:
        above, below, util = self._outside(disks)
        lo, hi = dir_band(disks, self.threshold)
        out = []
        for side, amount in (("above", above), ("below", below)):
            for b, d in zip(*np.nonzero(amount > 0), strict=True):
                b, d = int(b), int(d)
                text = f"{side} the band: {util[b, d]:.1%} used, band {lo[b]:.1%}\u2013{hi[b]:.1%}"
                found = dir_offender(
                    disks,
                    b,
                    d,
                    side=side,
                    value=float(util[b, d]),
                    band=[float(lo[b]), float(hi[b])],
                    text=text,
                )
                out.append((float(amount[b, d]), found))
        return out

    def optimize(self, model: ClusterModel) -> None:
        disks = model.disks
        if disks is None or disks.moves != DISK_MOVES_ALL:
            return
        above, below, _ = self._outside(disks)
        out = (above > 0).any(axis=1) | (below > 0).any(axis=1)
        if not out.any():
            return
        for b, (ps, ks) in disks.broker_cells().items():
            if out[b]:
                self._level(disks, b, ps, ks)

    def _level(self, disks: DiskModel, b: int, ps: np.ndarray, ks: np.ndarray) -> None:
        takes = disks.takes[b]
        sizes = np.where(takes, disks.total[b], 1.0)
        total = sizes.tolist()
        open_dirs = np.flatnonzero(takes).tolist()
        dirs = _DirCells(disks, ps, ks, open_dirs)
        used, limit = disks.used[b], disks.limit[b]
        # moves between its dirs leave a broker's band as it is
        lo, hi = (float(x[b]) for x in dir_band(disks, self.threshold))
        mean = hi / self.threshold
        for _ in range(MAX_MOVES_PER_DIR * len(open_dirs)):
            # plain floats: a few dirs are cheaper to scan in Python than through numpy
            util = (used / sizes).tolist()
            a = max(open_dirs, key=util.__getitem__)
            z = min(open_dirs, key=util.__getitem__)
            if util[a] <= hi and util[z] >= lo:
                return
            # bytes that bring a down to the mean and z up to it: the move to aim at
            want = min((util[a] - mean) * total[a], (mean - util[z]) * total[z])
            # any size under twice this lowers the spread of the dirs (their weighted
            # variance), so levelling ends
            gap = (util[a] - util[z]) / (1.0 / total[a] + 1.0 / total[z])
            room = float(limit[z] - used[z])
            if not dirs.move_nearest(a, z, max(want, 0.0), 2.0 * gap, room):
                return


class _DirCells:
    """A broker's movable replicas (placed, of some size) per open dir, by size then
    by their order among the broker's cells, kept as they move."""

    def __init__(
        self, disks: DiskModel, ps: np.ndarray, ks: np.ndarray, open_dirs: list[int]
    ) -> None:
        self.disks, self.ps, self.ks = disks, ps, ks
        sizes = disks.size.take(ps)
        flat = disks.flat(ps, ks)
        where = disks.dir.take(flat)
        cells = np.flatnonzero(disks.can_move.take(flat) & (where >= 0) & (sizes > 0))
        cells = cells[stable_argsort(sizes[cells])]
        self.sizes: dict[int, list[float]] = {}
        self.cells: dict[int, list[int]] = {}
        for d in open_dirs:
            mine = cells[where[cells] == d]
            self.sizes[d], self.cells[d] = sizes[mine].tolist(), mine.tolist()

    def move_nearest(self, a: int, z: int, want: float, below: float, room: float) -> bool:
        """Move to z the replica of a whose size is nearest `want` (the first such
        cell) among those under `below` and at most `room`; whether there was one."""
        sizes, cells = self.sizes[a], self.cells[a]
        cut = min(bisect_left(sizes, below), bisect_right(sizes, room))
        if cut == 0:
            return False
        # the distance to `want` falls up to `pos`, then rises (rounding keeps that
        # order), so the nearest sizes sit on either side of it, ties next to them
        pos = bisect_left(sizes, want, 0, cut)
        near = min(abs(sizes[j] - want) for j in (pos - 1, pos) if 0 <= j < cut)
        first, last = pos, pos
        while first > 0 and abs(sizes[first - 1] - want) == near:
            first -= 1
        while last < cut and abs(sizes[last] - want) == near:
            last += 1
        j = min(range(first, last), key=cells.__getitem__)
        size, i = sizes.pop(j), cells.pop(j)
        self.disks.move(int(self.ps[i]), int(self.ks[i]), z)
        into_sizes, into_cells = self.sizes[z], self.cells[z]
        at = bisect_left(into_sizes, size)
        while at < len(into_sizes) and into_sizes[at] == size and into_cells[at] < i:
            at += 1
        into_sizes.insert(at, size)
        into_cells.insert(at, i)
        return True
