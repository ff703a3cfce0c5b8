"""Soft goal: the leaders' bytes in spread over each broker's dirs by their size, so no
disk takes every leader's writes (Cruise Control issue 2234).

A dir is balanced when its leaders' bytes in are at most t x its share (the broker's
leader bytes in x the dir's part of the broker's size). The dir most above its share
hands a leader to the dir most below; when that would take either dir out of the disk
usage band, a follower of about the leader's size comes back in exchange.
"""

from __future__ import annotations

import numpy as np

from ..disks import DISK_MOVES_ALL, DiskModel
from ..model import ClusterModel
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
        takes = disks.takes[b]
        total = np.where(takes, disks.total[b], 1.0)
        placed = disks.can_move[ps, ks] & (disks.dir[ps, ks] >= 0)
        leaders = placed & (ks == 0) & (disks.leader_bytes[ps] > 0)
        followers = placed & (ks > 0)
        lo, hi = dir_band(disks, self.usage_threshold)
        # moves between its dirs leave a broker's shares as they are
        share = self._share(disks)[b]
        if not (share > 0).any():
            return
        for _ in range(MAX_MOVES_PER_DIR * int(takes.sum())):
            over = np.where(share > 0, disks.lead[b] - self.threshold * share, -np.inf)
            a = int(np.argmax(over))
            if over[a] <= 0:
                return
            ratio = np.divide(
                disks.lead[b], share, out=np.full_like(share, np.inf), where=share > 0
            )
            # the dir furthest below its share first, then the others
            if not any(
                self._to(disks, b, a, int(z), share, ps, ks, leaders, followers, lo, hi, total)
                for z in np.argsort(ratio, kind="stable")
                if z != a and ratio[z] < self.threshold
            ):
                return

    def _to(self, disks, b, a, z, share, ps, ks, leaders, followers, lo, hi, total) -> bool:
        """Hand a leader of dir a to dir z that brings both nearer their shares."""
        want = min(disks.lead[b, a] - share[a], share[z] - disks.lead[b, z])
        gap = disks.lead[b, a] - disks.lead[b, z]
        here = np.flatnonzero(leaders & (disks.dir[ps, ks] == a))
        here = here[disks.leader_bytes[ps[here]] < gap]
        if here.shape[0] == 0 or want <= 0:
            return False
        order = here[np.argsort(np.abs(disks.leader_bytes[ps[here]] - want), kind="stable")]
        return self._hand_over(disks, b, a, z, order[:16], ps, ks, followers, lo, hi, total)

    @staticmethod
    def _hand_over(disks, b, a, z, leaders, ps, ks, followers, lo, hi, total) -> bool:
        """Move the first of `leaders` whose move (alone, or with a follower of z back
        to a) keeps both dirs in the usage band, or no further out of it."""

        def fine(used_a: float, used_z: float) -> bool:
            ua, uz = used_a / total[a], used_z / total[z]
            now_a, now_z = disks.used[b, a] / total[a], disks.used[b, z] / total[z]
            worst_now = max(now_a - hi[b], lo[b] - now_a, now_z - hi[b], lo[b] - now_z, 0.0)
            worst = max(ua - hi[b], lo[b] - ua, uz - hi[b], lo[b] - uz, 0.0)
            return (
                worst <= worst_now and used_z <= disks.limit[b, z] and used_a <= disks.limit[b, a]
            )

        back = np.flatnonzero(followers & (disks.dir[ps, ks] == z))
        back_sizes = disks.size[ps[back]]
        for i in leaders.tolist():
            p, k = int(ps[i]), int(ks[i])
            size = float(disks.size[p])
            if fine(disks.used[b, a] - size, disks.used[b, z] + size):
                disks.move(p, k, z)
                return True
            if back.shape[0] == 0:
                continue
            j = int(np.argmin(np.abs(back_sizes - size)))
            size_back = float(back_sizes[j])
            if fine(disks.used[b, a] - size + size_back, disks.used[b, z] + size - size_back):
                disks.move(p, k, z)
                disks.move(int(ps[back[j]]), int(ks[back[j]]), a)
                return True
        return False
