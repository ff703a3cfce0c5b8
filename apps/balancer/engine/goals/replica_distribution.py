"""Soft goal: replica count per broker within the band around total / brokers."""

from __future__ import annotations

import numpy as np

from ..model import REPLICAS, ClusterModel
from .base import BandGoal, count_band


class ReplicaDistributionGoal(BandGoal):
    name = "replica-distribution"
    hard = False
    measure = REPLICAS

    def __init__(self, threshold: float) -> None:
        super().__init__()
        self.threshold = threshold

    def band(self, model: ClusterModel) -> tuple[np.ndarray, np.ndarray]:
        total = float(model.load[model.usable, self.measure].sum())
        lo, hi = count_band(total, model.n_usable, self.threshold)
        b = model.n_brokers
        return np.full(b, lo), np.full(b, hi)

    def _candidate_order(self, model: ClusterModel, ps: np.ndarray, w: np.ndarray) -> np.ndarray:
        return np.argsort(model.size[ps], kind="stable")  # smallest replicas: fewest bytes
