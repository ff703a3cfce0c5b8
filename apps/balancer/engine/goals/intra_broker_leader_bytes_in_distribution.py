"""Soft goal: the leaders' bytes in spread over each broker's dirs by their size, so no
disk takes every leader's writes (Cruise Control issue 2234).

A dir is balanced when its leaders' bytes in are at most t x its share (the broker's
leader bytes in x the dir's part of the broker's size). The dir most above its share
hands a leader to the dir most below; when that would take either dir out of the disk
usage band, a follower of about the leader's size comes back in exchange.
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from ..disks import DISK_MOVES_ALL, DiskModel
from ..model import ClusterModel
from ..sorting import stable_argsort
from .intra_broker import DiskGoal, dir_offender
from .intra_broker_disk_usage_distribution import MAX_MOVES_PER_DIR, dir_band


class IntraBrokerLeaderBytesInDistributionGoal(DiskGoal):
    name = "intra-broker-leader-bytes-in-distribution"
    hard = False

    def __init__(self, threshold: float, usage_threshold: float) -> None:
        self.threshold = threshold
        self.usage_threshold = usage_threshold

    def _share(self, disks: DiskModel) -> np.ndarray:
        """(B, D) each dir's share of its broker's leader bytes in."""
        return disks.shares(disks.lead)

    def disk_violation(self, disks: DiskModel) -> float:
        share = self._share(disks)
        return float(np.maximum(disks.lead - self.threshold * share, 0.0)[share > 0].sum())

    def disk_offenders(self, disks: DiskModel) -> list[tuple[float, dict]]:
        share = self._share(disks)
        hi = self.threshold * share
        out = []
        for b, d in zip(*np.nonzero((share > 0) & (disks.lead > hi)), strict=True):
            b, d = int(b), int(d)
            value = float(disks.lead[b, d])
            text = (
                f"above the band: leaders take {value:.3g} B/s in, "
                f"{value / share[b, d]:.2f} \u00d7 its share (band up to {self.threshold:.2f})"
            )
            found = dir_offender(
                disks, b, d, side="above", value=value, band=[None, float(hi[b, d])], text=text
            )
            out.append((value - float(hi[b, d]), found))
        return out

    def optimize(self, model: ClusterModel) -> None:
        disks = model.disks
        if disks is None or disks.moves != DISK_MOVES_ALL:
            return
        share = self._share(disks)
        out = ((share > 0) & (disks.lead > self.threshold * share)).any(axis=1)
        for b, (ps, ks) in disks.broker_cells().items():
            if out[b]:
                self._level(disks, b, ps, ks)

    def _level(self, disks: DiskModel, b: int, ps: np.ndarray, ks: np.ndarray) -> None:
        # moves between its dirs leave a broker's shares as they are
        share_row = self._share(disks)[b]
        if not (share_row > 0).any():
            return
        cells = _Cells(disks, b, ps, ks, self.usage_threshold)
        # plain floats: a few dirs are cheaper to scan in Python than through numpy
        share = share_row.tolist()
        shared = [d for d, s in enumerate(share) if s > 0]
        dirs = range(len(share))
        for _ in range(MAX_MOVES_PER_DIR * int(disks.takes[b].sum())):
            lead = disks.lead[b].tolist()
            over = [-np.inf] * len(share)
            ratio = [np.inf] * len(share)
            for d in shared:
                over[d] = lead[d] - self.threshold * share[d]
                ratio[d] = lead[d] / share[d]
            a = max(dirs, key=over.__getitem__)
            if over[a] <= 0:
                return
            # the dir furthest below its share first, then the others
            if not any(
                self._to(cells, a, z, share, lead)
                for z in sorted(dirs, key=ratio.__getitem__)
                if z != a and ratio[z] < self.threshold
            ):
                return

    @staticmethod
    def _to(cells: _Cells, a: int, z: int, share: list[float], lead: list[float]) -> bool:
        """Hand a leader of dir a to dir z that brings both nearer their shares."""
        want = min(lead[a] - share[a], share[z] - lead[z])
        gap = lead[a] - lead[z]
        if want <= 0:
            return False
        bytes_in, leaders = cells.bytes_in[a], cells.leaders[a]
        under = bisect_left(bytes_in, gap)
        if under == 0:
            return False
        return cells.hand_over(a, z, _nearest(bytes_in, leaders, under, want, 16))


def _nearest(values: list[float], items: list[int], end: int, want: float, n: int) -> list[int]:
    """The first n of `items[:end]` by |value - want|, ties in the order of the items
    (`values` ascending, ties in item order)."""
    # the distance falls up to want's place, then rises (rounding keeps that order):
    # walk out from there, nearest first, on to every tie of the n-th
    right = bisect_left(values, want, 0, end)
    left = right - 1
    taken: list[tuple[float, int]] = []
    while left >= 0 or right < end:
        if right >= end or (left >= 0 and abs(values[left] - want) <= abs(values[right] - want)):
            j, left = left, left - 1
        else:
            j, right = right, right + 1
        key = abs(values[j] - want)
        if len(taken) >= n and key != taken[-1][0]:
            break
        taken.append((key, items[j]))
    taken.sort()
    return [i for _, i in taken[:n]]


class _Cells:
    """A broker's movable leaders and followers (placed in a dir) as the leaders' goal
    sees them, numbered in the order of the broker's cells: each follower's dir and
    bytes, each leader's bytes and, per dir, its leaders by bytes in (ties in their
    order), kept as they move."""

    def __init__(
        self, disks: DiskModel, b: int, ps: np.ndarray, ks: np.ndarray, usage_threshold: float
    ) -> None:
        self.disks, self.b = disks, b
        takes = disks.takes[b]
        self.total = np.where(takes, disks.total[b], 1.0)
        flat = disks.flat(ps, ks)
        where = disks.dir.take(flat)
        placed = disks.can_move.take(flat) & (where >= 0)
        lead = disks.leader_bytes.take(ps)
        leaders = np.flatnonzero(placed & (ks == 0) & (lead > 0))
        followers = np.flatnonzero(placed & (ks > 0))
        self.leader_p, self.leader_size = ps[leaders], disks.size[ps[leaders]]
        self.leader_in = lead[leaders].tolist()
        order = stable_argsort(lead[leaders])
        in_dir = where[leaders][order]
        self.bytes_in: dict[int, list[float]] = {}
        self.leaders: dict[int, list[int]] = {}
        for d in range(takes.shape[0]):
            mine = order[in_dir == d]
            self.bytes_in[d], self.leaders[d] = lead[leaders][mine].tolist(), mine.tolist()
        self.follower_p, self.follower_k = ps[followers], ks[followers]
        self.follower_dir, self.follower_size = where[followers], disks.size[self.follower_p]
        lo, hi = dir_band(disks, usage_threshold)
        self.lo, self.hi = lo[b], hi[b]

    def hand_over(self, a: int, z: int, leaders: list[int]) -> bool:
        """Move the first of `leaders` whose move (alone, or with a follower of z back
        to a) keeps both dirs in the usage band, or no further out of it."""
        disks, b, total, lo, hi = self.disks, self.b, self.total, self.lo, self.hi

        def fine(used_a: float, used_z: float) -> bool:
            ua, uz = used_a / total[a], used_z / total[z]
            now_a, now_z = disks.used[b, a] / total[a], disks.used[b, z] / total[z]
            worst_now = max(now_a - hi, lo - now_a, now_z - hi, lo - now_z, 0.0)
            worst = max(ua - hi, lo - ua, uz - hi, lo - uz, 0.0)
            return (
                worst <= worst_now and used_z <= disks.limit[b, z] and used_a <= disks.limit[b, a]
            )

        back = back_sizes = None  # z's followers, found when first needed
        for i in leaders:
            size = float(self.leader_size[i])
            if fine(disks.used[b, a] - size, disks.used[b, z] + size):
                self._lead_to(i, a, z)
                return True
            if back is None:
                back = np.flatnonzero(self.follower_dir == z)
                back_sizes = self.follower_size[back]
            if back.shape[0] == 0:
                continue
            j = int(np.argmin(np.abs(back_sizes - size)))
            size_back = float(back_sizes[j])
            if fine(disks.used[b, a] - size + size_back, disks.used[b, z] + size - size_back):
                self._lead_to(i, a, z)
                f = int(back[j])
                disks.move(int(self.follower_p[f]), int(self.follower_k[f]), a)
                self.follower_dir[f] = a
                return True
        return False

    def _lead_to(self, i: int, a: int, to: int) -> None:
        """Move leader i from dir a to dir `to`."""
        self.disks.move(int(self.leader_p[i]), 0, to)
        value = self.leader_in[i]
        bytes_in, leaders = self.bytes_in[a], self.leaders[a]
        j = bisect_left(bytes_in, value)
        while leaders[j] != i:
            j += 1
        del bytes_in[j], leaders[j]
        bytes_in, leaders = self.bytes_in[to], self.leaders[to]
        j = bisect_left(bytes_in, value)
        while j < len(leaders) and bytes_in[j] == value and leaders[j] < i:
            j += 1
        bytes_in.insert(j, value)
        leaders.insert(j, i)
