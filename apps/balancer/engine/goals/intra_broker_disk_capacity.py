"""Hard goal: no log dir holds more than the capacity threshold of its size, and no
replica stays in a dir that takes none (offline, or being removed).

Replicas that must move (arrived on their broker, or in a dir that takes none) go,
largest first, to the dir of their broker that is least used after taking them and
stays under its limit (else to the one with most room left); then a dir still over
its limit hands replicas to its broker's dirs with room.
"""

from __future__ import annotations

import math

import numpy as np

from ..disks import DISK_MOVES_NONE, DiskModel
from ..model import ClusterModel
from ..sorting import stable_argsort
from .intra_broker import DiskGoal, dir_offender


class IntraBrokerDiskCapacityGoal(DiskGoal):
    name = "intra-broker-disk-capacity"
    hard = True

    def __init__(self, capacity_threshold: float) -> None:
        self.threshold = capacity_threshold

    def disk_violation(self, disks: DiskModel) -> float:
        over = np.where(disks.takes, np.maximum(disks.used - disks.limit, 0.0), disks.used)
        return float(over.sum()) + disks.unplaced_bytes()

    def disk_offenders(self, disks: DiskModel) -> list[tuple[float, dict]]:
        out = []
        over = disks.listed[:, None] & (disks.used > disks.limit)
        for b, d in zip(*np.nonzero(over), strict=True):
            used, limit = float(disks.used[b, d]), float(disks.limit[b, d])
            if disks.takes[b, d]:
                text = f"holds {used:.3g} bytes, over its limit of {limit:.3g}"
            else:
                text = f"holds {used:.3g} bytes but takes no replicas (offline or removed)"
            found = dir_offender(
                disks, int(b), int(d), side="above", value=used, band=[None, limit], text=text
            )
            out.append((used - limit, found))
        return out

    def optimize(self, model: ClusterModel) -> None:
        disks = model.disks
        if disks is None or disks.moves == DISK_MOVES_NONE:
            return
        for b, (ps, ks) in disks.broker_cells().items():
            if not disks.takes[b].any():
                continue
            self._place(disks, b, ps, ks)
            self._relieve(disks, b, ps, ks)

    @staticmethod
    def _place(disks: DiskModel, b: int, ps: np.ndarray, ks: np.ndarray) -> None:
        todo = disks.must_move.take(disks.flat(ps, ks))
        if not todo.any():
            return
        ps, ks = ps[todo], ks[todo]
        order = stable_argsort(-disks.size.take(ps))
        ps, ks = ps[order], ks[order]
        # plain floats: four dirs are cheaper to scan in Python than through numpy
        used, limit = disks.used[b].tolist(), disks.limit[b].tolist()
        total = [t if t > 0 else 1.0 for t in disks.total[b].tolist()]
        open_dirs = np.flatnonzero(disks.takes[b]).tolist()
        fixed = [(d, limit[d], total[d]) for d in open_dirs]  # what no placement changes
        inf = math.inf
        placed = []
        for size in disks.size[ps].tolist():
            to, least = -1, inf
            for d, cap, whole in fixed:
                after = used[d] + size
                if after <= cap:
                    share = after / whole
                    if share < least:
                        to, least = d, share
            if to < 0:  # fits nowhere: the dir with most room left
                to = max(open_dirs, key=lambda d: limit[d] - used[d])
            used[to] += size
            placed.append(to)
        disks.move_many(ps, ks, np.array(placed, dtype=np.int32))

    @staticmethod
    def _relieve(disks: DiskModel, b: int, ps: np.ndarray, ks: np.ndarray) -> None:
        """Move replicas out of dirs over their limit into dirs with room, largest
        that fits first."""
        takes = disks.takes[b]
        flat = disks.flat(ps, ks)
        for d in np.flatnonzero(takes & (disks.used[b] > disks.limit[b])).tolist():
            here = np.flatnonzero(disks.dir.take(flat) == d)
            order = here[stable_argsort(-disks.size[ps[here]])]
            for i in order.tolist():
                excess = disks.used[b, d] - disks.limit[b, d]
                if excess <= 0:
                    break
                p, k = int(ps[i]), int(ks[i])
                if not disks.can_move[p, k]:
                    continue
                size = float(disks.size[p])
                room = np.where(takes, disks.limit[b] - disks.used[b], -np.inf)
                room[d] = -np.inf
                to = int(np.argmax(room))
                if room[to] >= size:
                    disks.move(p, k, to)
