"""Hard goal: replicas of a partition on distinct racks while racks >= replicas.

With fewer usable racks than replicas, at most ceil(rf / racks) replicas may share
a rack. A broker without a rack counts as a rack of its own. Every later move is
checked against this goal by the model (it never makes a partition's spread worse).
"""

from __future__ import annotations

import numpy as np

from ..model import ClusterModel
from ..racks import rack_violations
from .goal import Goal
from .judging import MAX_OFFENDERS, judgement


def partition_violations(model: ClusterModel) -> np.ndarray:
    assign = model.assign
    racks = np.where(assign >= 0, model.rack[np.maximum(assign, 0)], -1)
    return rack_violations(racks, model.rack_max)


class RackAwarenessGoal(Goal):
    name = "rack-awareness"
    hard = True

    def violation(self, model: ClusterModel) -> float:
        return float(partition_violations(model).sum())

    def judge(self, model: ClusterModel) -> dict:
        v = partition_violations(model)
        bad = np.flatnonzero(v > 0)
        bad = bad[np.lexsort((bad, -v[bad]))]
        offenders = []
        for p in bad[:MAX_OFFENDERS].tolist():
            n, m = int(v[p]), model.rack_max_l[p]
            offenders.append(
                {
                    "partition": model.snap.partition_name(p),
                    "side": "above",
                    "value": float(n),
                    "band": [None, 0.0],
                    "text": f"partition {model.snap.partition_name(p)} has {n} replica"
                    f"{'s' if n != 1 else ''} too many on one rack (limit {m} per rack)",
                }
            )
        return judgement(float(v.sum()), offenders, int(bad.shape[0]))

    def optimize(self, model: ClusterModel) -> None:
        if not model.movable.any():
            return
        v = partition_violations(model)
        for p in np.flatnonzero((v > 0) & ~model.frozen).tolist():
            for _ in range(model.rf_l[p]):
                if not self._fix_one(model, p):
                    break

    def _fix_one(self, model: ClusterModel, p: int) -> bool:
        """Move one replica out of an over-full rack; False when done or stuck."""
        rf = model.rf_l[p]
        m = model.rack_max_l[p]
        members = model.assign[p, :rf].tolist()
        racks = [model.rack_l[b] for b in members]
        count: dict[int, int] = {}
        for r in racks:
            count[r] = count.get(r, 0) + 1
        slots = [k for k in range(rf) if count[racks[k]] > m]
        if not slots:
            return False
        # followers before the leader, small replicas first: cheapest to move
        slots.sort(key=lambda k: (k == 0, float(model.size[p]), k))
        for k in slots:
            if not model.movable[p, k]:
                continue
            vec = model.replica_vec(p, k)
            mask = model.move_dest_mask(p, k, vec, fix_rack=True)
            if mask is None or not mask.any():
                continue
            d = int(np.argmin(np.where(mask, model.place_score(vec), np.inf)))
            model.move_replica(p, k, d, self.name)
            return True
        model.unfixable.setdefault(p, "no move can spread its replicas over more racks")
        return False
