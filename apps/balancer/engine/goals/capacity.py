"""Hard goals: network in, network out and disk under a share of each capacity.

A broker without a declared capacity for a resource is unbounded for it.
"""

from __future__ import annotations

import numpy as np

from ..model import DISK, NW_IN, NW_OUT, ClusterModel
from .base import BandGoal

RESOURCE_NAMES = {NW_IN: "network-in", NW_OUT: "network-out", DISK: "disk"}


class CapacityGoal(BandGoal):
    hard = True

    def __init__(self, measure: int, capacity_threshold: float) -> None:
        super().__init__()
        self.measure = measure
        self.name = f"{RESOURCE_NAMES[measure]}-capacity"
        self.capacity_threshold = capacity_threshold

    def band(self, model: ClusterModel) -> tuple[np.ndarray, np.ndarray]:
        cap = model.snap.capacity[:, self.measure]
        hi = np.where(np.isfinite(cap), cap * self.capacity_threshold, np.inf)
        return np.full(model.n_brokers, -np.inf), hi

    def scale(self, model: ClusterModel) -> tuple[np.ndarray, str] | None:
        cap = model.snap.capacity[:, self.measure]
        return np.where(np.isfinite(cap) & (cap > 0), cap, np.nan), "capacity"

    def describe(self) -> dict:
        return {**super().describe(), "capacity_threshold": self.capacity_threshold}
