"""Soft goal: bytes in of the partitions a broker leads, spread evenly.

Measured against network-in capacity when every usable broker declares one."""

from __future__ import annotations

import numpy as np

from ..measures import LEADER_BYTES_IN
from ..model import ClusterModel
from .band import BandGoal
from .resource_distribution import fair_share, utilisation_band


class LeaderBytesInDistributionGoal(BandGoal):
    name = "leader-bytes-in-distribution"
    hard = False
    measure = LEADER_BYTES_IN

    def __init__(self, threshold: float) -> None:
        super().__init__()
        self.threshold = threshold

    def band(self, model: ClusterModel) -> tuple[np.ndarray, np.ndarray]:
        return utilisation_band(model, self.measure, self.threshold)

    def scale(self, model: ClusterModel) -> tuple[np.ndarray, str] | None:
        return fair_share(model, self.measure), "mean"
