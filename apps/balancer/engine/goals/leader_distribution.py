"""Soft goal: leader count per broker within the band around leaders / brokers.

Leadership changes come first; moving a leader replica is the fallback."""

from __future__ import annotations

import numpy as np

from ..model import LEADERS, ClusterModel
from .base import BandGoal, count_band


class LeaderDistributionGoal(BandGoal):
    name = "leader-distribution"
    hard = False
    measure = LEADERS

    def __init__(self, threshold: float) -> None:
        super().__init__()
        self.threshold = threshold

    def band(self, model: ClusterModel) -> tuple[np.ndarray, np.ndarray]:
        total = float(model.load[model.usable, self.measure].sum())
        lo, hi = count_band(total, model.n_usable, self.threshold)
        b = model.n_brokers
        return np.full(b, lo), np.full(b, hi)

    def _candidate_order(
        self, model: ClusterModel, ps: np.ndarray, w: np.ndarray, s: int
    ) -> np.ndarray:
        return np.argsort(model.size[ps], kind="stable")
