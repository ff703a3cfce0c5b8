"""Count bands: a per-broker count within floor/ceil of its ideal, widened by the threshold.

`CountBandGoal` keeps one such count (replicas, leaders) per broker inside its band;
the per-topic goal spreads each topic's count with the same bands (BALANCING.md §4).
"""

from __future__ import annotations

import numpy as np

from ..model import ClusterModel
from .band import BandGoal


def count_bands(
    totals: np.ndarray, n: int, threshold: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Band of counts (one per row of `totals`) spread over n brokers: always within
    floor/ceil of the ideal, widened by the threshold. Returns (ideal, lo, hi)."""
    ideal = np.asarray(totals, dtype=np.float64) / max(n, 1)
    hi = np.maximum(np.ceil(ideal - 1e-9), np.floor(ideal * threshold + 1e-9))
    lo = np.minimum(np.floor(ideal + 1e-9), np.ceil(ideal * (2.0 - threshold) - 1e-9))
    return ideal, np.maximum(lo, 0.0), hi


def count_band(total: float, n: int, threshold: float) -> tuple[float, float]:
    """`count_bands` for a single count: (lo, hi)."""
    _, lo, hi = count_bands(np.array([total]), n, threshold)
    return float(lo[0]), float(hi[0])


class CountBandGoal(BandGoal):
    """A soft goal on a per-broker count (replicas, leaders): within ⌊ideal⌋..⌈ideal⌉,
    widened by the threshold."""

    hard = False

    def __init__(self, threshold: float) -> None:
        super().__init__()
        self.threshold = threshold

    def band(self, model: ClusterModel) -> tuple[np.ndarray, np.ndarray]:
        sharing = model.sharing(self.measure)
        total = float(model.load[sharing, self.measure].sum())
        lo, hi = count_band(total, int(sharing.sum()), self.threshold)
        b = model.n_brokers
        return np.full(b, lo), np.full(b, hi)

    def scale(self, model: ClusterModel) -> tuple[np.ndarray, str] | None:
        sharing = model.sharing(self.measure)
        total = float(model.load[sharing, self.measure].sum())
        return np.full(model.n_brokers, total / max(int(sharing.sum()), 1)), "mean"
