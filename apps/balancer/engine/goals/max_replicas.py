"""Hard goal: no broker holds more than `max_replicas_per_broker` replicas."""

from __future__ import annotations

import numpy as np

from ..measures import REPLICAS
from ..model import ClusterModel
from .band import BandGoal


class MaxReplicasGoal(BandGoal):
    name = "max-replicas"
    hard = True
    measure = REPLICAS

    def __init__(self, max_replicas: int) -> None:
        super().__init__()
        self.max_replicas = max_replicas

    def band(self, model: ClusterModel) -> tuple[np.ndarray, np.ndarray]:
        b = model.n_brokers
        return np.full(b, -np.inf), np.full(b, float(self.max_replicas))

    def candidate_order(
        self, model: ClusterModel, ps: np.ndarray, w: np.ndarray, s: int
    ) -> np.ndarray:
        # fewest bytes added to the plan first
        return np.argsort(model.move_cost(ps, s), kind="stable")

    def describe(self) -> dict:
        return {**super().describe(), "max_replicas_per_broker": self.max_replicas}
