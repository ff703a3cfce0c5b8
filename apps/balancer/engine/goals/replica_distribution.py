"""Soft goal: replica count per broker within the band around total / brokers."""

from __future__ import annotations

import numpy as np

from ..measures import REPLICAS
from ..model import ClusterModel
from .band_count_replicas import count_replica_moves
from .count_band import CountBandGoal


class ReplicaDistributionGoal(CountBandGoal):
    name = "replica-distribution"
    measure = REPLICAS

    def candidate_order(
        self, model: ClusterModel, ps: np.ndarray, w: np.ndarray, s: int
    ) -> np.ndarray:
        # replicas of topics crowded on this broker first (the same move then serves
        # per-topic balance too), then those an earlier move put here (moving them on
        # adds no bytes to the plan), smallest first
        t = model.topic[ps]
        # each topic's replicas on usable brokers: all of them, less the few on
        # brokers not usable
        total = model.topic_total
        if model.n_usable < model.n_brokers:
            total = total - model.topic_count[:, ~model.usable].sum(axis=1)
        total = total[t]
        crowded = model.topic_count[t, s] >= 2.0 * total / max(model.n_usable, 1) + 1.0
        cost = model.move_cost(ps, s)
        return np.lexsort((cost, cost > 0, ~crowded))

    def replica_moves(
        self, model: ClusterModel, *, lo: np.ndarray, hi: np.ndarray, shed: bool
    ) -> int:
        # each replica weighs 1 of the count: the step's faster form, same moves
        return count_replica_moves(self, model, lo=lo, hi=hi, shed=shed)

    def dest_score(
        self, model: ClusterModel, p: int, after: np.ndarray, norm: np.ndarray
    ) -> np.ndarray:
        # equal counts: prefer the broker with fewest replicas of this topic (the
        # goal's replica step, band_count_replicas.py, keeps the same figures in step)
        return after / norm + model.topic_count[model.topic_l[p]] * 1e-6
