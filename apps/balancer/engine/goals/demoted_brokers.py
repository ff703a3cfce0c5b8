"""Hard goal: a demoted broker leads nothing another replica could lead.

Cruise Control's `demote_broker`: leadership moves to another alive replica (the one
whose broker leads the least network out), and the demoted broker goes last in every
replica list it is in, so that Kafka elects it only when no other replica is in sync.
No data is copied. Registered as a constraint from the start, like every hard goal: no
later move, whatever the goal, gives a demoted broker a leadership. A partition whose
only alive replicas are on demoted brokers keeps its leader; so does one whose every
other replica's broker would go over a capacity limit by leading it. The goal reports
both as unmet.
"""

from __future__ import annotations

import numpy as np

from ..measures import LEADERS, NW_OUT
from ..model import ClusterModel
from .goal import Goal
from .judging import MAX_OFFENDERS, judgement


class DemotedBrokersGoal(Goal):
    name = "demoted-brokers"
    hard = True

    def _led(self, model: ClusterModel) -> np.ndarray:
        """Partitions led by a demoted broker with an alive replica not demoted."""
        assign = model.assign
        led = model.demoted[np.maximum(assign[:, 0], 0)] & (assign[:, 0] >= 0)
        cells = assign >= 0
        other = (model.leading[np.maximum(assign, 0)] & cells)[:, 1:].any(axis=1)
        return np.flatnonzero(led & other & ~model.frozen)

    def _misplaced(self, model: ClusterModel) -> np.ndarray:
        """Partitions where a demoted follower is ahead of one not demoted."""
        assign = model.assign[:, 1:]
        cells = assign >= 0
        dem = model.demoted[np.maximum(assign, 0)] & cells
        keep = cells & ~dem
        # per slot: is some later slot not demoted?
        later = np.zeros_like(dem)
        later[:, :-1] = np.flip(np.cumsum(np.flip(keep[:, 1:], axis=1), axis=1), axis=1) > 0
        return np.flatnonzero((dem & later).any(axis=1) & ~model.frozen)

    def violation(self, model: ClusterModel) -> float:
        return float(self._led(model).shape[0])

    def judge(self, model: ClusterModel) -> dict:
        parts = self._led(model)
        leaders = model.assign[parts, 0]
        held = np.bincount(leaders, minlength=model.n_brokers)
        bad = np.flatnonzero(held > 0)
        bad = bad[np.lexsort((bad, -held[bad]))]
        ids = model.snap.broker_ids
        offenders = [
            {
                "broker": int(ids[b]),
                "side": "above",
                "value": float(held[b]),
                "band": [None, 0.0],
                "text": f"broker {int(ids[b])} (demoted) leads {int(held[b])} partition"
                f"{'s' if held[b] != 1 else ''} another replica could lead",
            }
            for b in bad[:MAX_OFFENDERS].tolist()
        ]
        return judgement(float(parts.shape[0]), offenders, int(bad.shape[0]))

    def register(self, model: ClusterModel) -> None:
        if model.demoted.any():
            model.tighten(LEADERS, None, np.where(model.demoted, 0.0, np.inf))

    def optimize(self, model: ClusterModel) -> None:
        for p in self._led(model).tolist():
            rf = int(model.rf_l[p])
            slots = [
                k
                for k in range(1, rf)
                if model.leading[int(model.assign[p, k])] and model.leader_move_ok(p, k, force=True)
            ]
            if slots:  # else every other replica's broker would break a hard limit
                k = min(slots, key=lambda k: (model.load[int(model.assign[p, k]), NW_OUT], k))
                model.move_leader(p, k, self.name)

    def finish(self, model: ClusterModel) -> None:
        # at the very end: a later goal may bring a demoted broker into a partition
        for p in self._misplaced(model).tolist():
            rf = int(model.rf_l[p])
            # stable: the followers not demoted first, in their order, then the demoted
            want = sorted(
                range(1, rf), key=lambda k: (bool(model.demoted[int(model.assign[p, k])]), k)
            )
            target = [int(model.assign[p, k]) for k in want]
            for i, b in enumerate(target, start=1):
                j = i + [int(x) for x in model.assign[p, i:rf]].index(b)
                if j != i:
                    model.swap_followers(p, i, j, self.name)
