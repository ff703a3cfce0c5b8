"""What the band optimiser's move steps ask of a band goal (`BandGoal` implements it).

The steps (band_leaders.py, band_replicas.py, band_swaps.py) see a goal through this
protocol only, so they need not import the goal class that calls them.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..model import ClusterModel


class BandHooks(Protocol):
    """A band goal as its move steps see it: the measure, the name moves are counted
    under, whether only leadership may change, and the orderings subclasses tune."""

    name: str
    measure: int
    leadership_only: bool

    def weights(self, model: ClusterModel, ps: np.ndarray, ks: np.ndarray) -> np.ndarray: ...

    def candidate_order(
        self, model: ClusterModel, ps: np.ndarray, w: np.ndarray, s: int
    ) -> np.ndarray: ...

    # a new array each call: the replica step marks brokers it rules out in it
    def dest_score(
        self, model: ClusterModel, p: int, after: np.ndarray, norm: np.ndarray
    ) -> np.ndarray: ...

    def leader_order(self, model: ClusterModel, ps: np.ndarray, w: np.ndarray) -> np.ndarray: ...
