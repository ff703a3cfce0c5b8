"""Soft goal: leader count per broker within the band around leaders / brokers.

Leadership changes come first; moving a leader replica is the fallback."""

from __future__ import annotations

import numpy as np

from ..measures import LEADERS
from ..model import ClusterModel
from .count_band import CountBandGoal


class LeaderDistributionGoal(CountBandGoal):
    name = "leader-distribution"
    measure = LEADERS

    def candidate_order(
        self, model: ClusterModel, ps: np.ndarray, w: np.ndarray, s: int
    ) -> np.ndarray:
        return np.argsort(model.move_cost(ps, s), kind="stable")
