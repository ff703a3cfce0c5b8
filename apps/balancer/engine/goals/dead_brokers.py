"""Hard goal: no replica on a dead broker or on a broker being removed.

Each affected partition is fixed as a whole or not at all: a plan may only list
partitions whose every replica is on an alive broker (BALANCING.md §2), so a half
evacuated partition would be unusable. Leadership is handed to a surviving replica
first (no data copied), preferring the broker Kafka already elected; then each
replica on a dead or removed broker moves to the least loaded acceptable broker.
Partitions with every replica on dead brokers can't be healed without data loss:
they are left alone and reported unless the request allows data loss.
"""

from __future__ import annotations

import math

import numpy as np

from ..measures import NW_OUT
from ..model import ClusterModel
from .goal import Goal
from .judging import MAX_OFFENDERS, judgement


class DeadBrokersGoal(Goal):
    name = "dead-brokers"
    hard = True

    def __init__(self, allow_data_loss: bool = False) -> None:
        self.allow_data_loss = allow_data_loss

    def violation(self, model: ClusterModel) -> float:
        cells = model.assign >= 0
        return float((~model.usable[model.assign[cells]]).sum())

    def judge(self, model: ClusterModel) -> dict:
        cells = model.assign >= 0
        held = np.bincount(model.assign[cells], minlength=model.n_brokers)
        bad = np.flatnonzero(~model.usable & (held > 0))
        bad = bad[np.lexsort((bad, -held[bad]))]
        ids = model.snap.broker_ids
        offenders = []
        for b in bad[:MAX_OFFENDERS].tolist():
            why = "dead" if not model.alive[b] else "being removed"
            n = int(held[b])
            offenders.append(
                {
                    "broker": int(ids[b]),
                    "side": "above",
                    "value": float(n),
                    "band": [None, 0.0],
                    "text": f"broker {int(ids[b])} ({why}) holds {n} replica"
                    f"{'s' if n != 1 else ''}, band up to 0",
                }
            )
        return judgement(float(held[bad].sum()), offenders, int(bad.shape[0]))

    def optimize(self, model: ClusterModel) -> None:
        if not model.movable.any():
            return  # leaders mode: no replica may move
        assign = model.assign
        cells = assign >= 0
        bad = (~model.usable)[np.maximum(assign, 0)] & cells
        parts = np.flatnonzero(bad.any(axis=1))
        if parts.shape[0] == 0:
            return
        # heaviest partitions first: they are the hardest to fit
        weight = ((model.fvec[parts] + model.lvec[parts]) / model.place_target.min(axis=0)).max(
            axis=1
        )
        parts = parts[np.argsort(-weight, kind="stable")]
        for p in parts.tolist():
            holders = assign[p, : model.rf_l[p]]
            lossy = not bool(model.alive[holders].any())
            if lossy and not self.allow_data_loss:
                model.data_loss_skipped.append(p)
                continue
            model.begin()
            reason = self._evacuate(model, p)
            if reason is None:
                model.commit()
                if lossy:
                    model.data_loss_healed.append(p)
            else:
                model.rollback()
                model.unfixable[p] = reason

    def _evacuate(self, model: ClusterModel, p: int) -> str | None:
        assign = model.assign
        rf = model.rf_l[p]
        for k in range(rf):
            if not model.usable[assign[p, k]] and not model.movable[p, k]:
                return "the mode does not allow moving this replica"
        if not model.usable[assign[p, 0]]:
            self._hand_over_leadership(model, p)
        for k in range(rf):
            if model.usable[assign[p, k]]:
                continue
            vec = model.replica_vec(p, k)
            mask = model.move_dest_mask(p, k, vec)
            if mask is None or not mask.any():
                return "no broker can take a replica without breaking a hard goal"
            d = int(np.argmin(np.where(mask, model.place_score(vec), np.inf)))
            model.move_replica(p, k, d, self.name)
        return None

    def _hand_over_leadership(self, model: ClusterModel, p: int) -> None:
        assign = model.assign
        current = int(model.snap.leader[p])
        best_k, best = -1, math.inf
        for k in range(1, model.rf_l[p]):
            b = int(assign[p, k])
            if not model.usable[b] or not model.leader_move_ok(p, k, force=True):
                continue
            # Kafka already moved leadership to `current`: keep it there when possible
            score = (
                -1.0
                if b == current
                else ((model.load[b, NW_OUT] + model.lout[p]) / model.place_target[b, NW_OUT])
            )
            if score < best:
                best_k, best = k, score
        if best_k > 0:
            model.move_leader(p, best_k, self.name)
