"""Soft goals: network in, network out and disk spread evenly.

Utilisation is load / capacity (raw load when some usable broker declares no
capacity). A broker is balanced when its utilisation lies within
[(2 - t) x ideal, t x ideal], t being the goal's threshold (default 1.10).
"""

from __future__ import annotations

import numpy as np

from ..measures import DISK, NW_IN, NW_OUT
from ..model import ClusterModel
from .band import BandGoal
from .capacity import RESOURCE_NAMES


def fair_share(model: ClusterModel, measure: int) -> np.ndarray:
    """Per broker, the load it would carry at the ideal utilisation: total load /
    total capacity x its capacity (or total / brokers without capacities)."""
    norm = model.norm[:, measure]
    u = model.sharing(measure)
    total = float(model.load[u, measure].sum())
    ideal = total / float(norm[u].sum()) if u.any() else 0.0
    return ideal * norm


def utilisation_band(
    model: ClusterModel, measure: int, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    share = fair_share(model, measure)
    return (2.0 - threshold) * share, threshold * share


class ResourceDistributionGoal(BandGoal):
    hard = False

    def __init__(self, measure: int, threshold: float) -> None:
        super().__init__()
        assert measure in (NW_IN, NW_OUT, DISK)
        self.measure = measure
        self.name = f"{RESOURCE_NAMES[measure]}-distribution"
        self.threshold = threshold

    def band(self, model: ClusterModel) -> tuple[np.ndarray, np.ndarray]:
        return utilisation_band(model, self.measure, self.threshold)

    def scale(self, model: ClusterModel) -> tuple[np.ndarray, str] | None:
        return fair_share(model, self.measure), "mean"
