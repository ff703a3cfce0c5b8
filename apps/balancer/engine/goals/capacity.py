"""Hard goals: network in, network out and disk under a share of each capacity.

A broker without a declared capacity for a resource is unbounded for it.

When the whole cluster is over the limit (total load / total capacity above the
threshold) no plan can meet the goal; it then levels instead: a broker over its limit
may take load from other brokers over it up to the ideal utilisation (total / total
capacity x its capacity) but may not drop under its limit. Once levelled, the goal's
violation (load over the limits, summed) must never grow, and a move from a broker
under its limit to one over it is the only one that makes it grow. Per broker, one
of two rules rules that out, whichever restricts fewer brokers:

- most brokers under their limit: a broker over its limit may not grow, one under it
  may not go over it;
- most brokers over their limit (every one of them, typically): a broker under its
  limit may not shed and may not go over it, one over it stays between its limit and
  LEVEL_MARGIN above the ideal (never above the worst utilisation at the start).
  Moves among brokers over their limit leave the violation as it is; without that
  margin a cluster levelled exactly to the ideal in one resource has no room left to
  level the next one (every replica carries both).

So the violation never grows, the worst utilisation relative to capacity only falls,
and what stays unmet is reported.
"""

from __future__ import annotations

import numpy as np

from ..measures import DISK, NW_IN, NW_OUT
from ..model import ClusterModel
from .band import BandGoal

# room above the ideal utilisation a broker over its limit keeps for later moves
LEVEL_MARGIN = 0.02
RESOURCE_NAMES = {NW_IN: "network-in", NW_OUT: "network-out", DISK: "disk"}


class CapacityGoal(BandGoal):
    hard = True

    def __init__(self, measure: int, capacity_threshold: float) -> None:
        super().__init__()
        self.measure = measure
        self.name = f"{RESOURCE_NAMES[measure]}-capacity"
        self.capacity_threshold = capacity_threshold
        self._worst: float | None = None

    def band(self, model: ClusterModel) -> tuple[np.ndarray, np.ndarray]:
        cap = model.snap.capacity[:, self.measure]
        hi = np.where(np.isfinite(cap), cap * self.capacity_threshold, np.inf)
        return np.full(model.n_brokers, -np.inf), hi

    def overload(self, model: ClusterModel) -> float | None:
        """The ideal utilisation when it is above the threshold, else None. Load on
        unusable brokers counts: it all ends on the usable ones."""
        cap = model.snap.capacity[model.usable, self.measure]
        if cap.shape[0] == 0 or not np.all(np.isfinite(cap) & (cap > 0)):
            return None  # an unbounded broker can take any excess
        ideal = float(model.load[:, self.measure].sum()) / float(cap.sum())
        return ideal if ideal > self.capacity_threshold else None

    def _bands(self, model: ClusterModel, *, optimising: bool) -> tuple[np.ndarray, ...]:
        lo, hi = self._band(model)
        ideal = self.overload(model)
        if ideal is None:
            return lo, hi
        cap = np.where(model.usable, model.snap.capacity[:, self.measure], np.inf)
        level = np.maximum(hi, cap * ideal * (1.0 + 1e-9))
        load = model.load[:, self.measure]
        over = load > hi
        # while this goal levels, load comes only from brokers over their limit (they
        # shed down to the level, never under the limit), so any broker may take it up
        # to the level; afterwards see the module docstring
        if optimising:
            return np.where(over, hi, -np.inf), level
        under = model.usable & ~over
        if under.sum() <= over.sum():
            if self._worst is None:
                self._worst = float((load[model.usable] / cap[model.usable]).max())
            room = cap * min(ideal * (1.0 + LEVEL_MARGIN), self._worst)
            lo = np.where(over, hi, np.where(under, load * (1.0 - 1e-9), -np.inf))
            return lo, np.where(over, np.maximum(np.maximum(level, room), load * (1.0 + 1e-9)), hi)
        lo = np.where(over, hi, -np.inf)
        return lo, np.where(over, np.maximum(hi, load * (1.0 + 1e-9)), hi)

    def prepare(self, model: ClusterModel) -> None:
        self._lo, self._hi = self._bands(model, optimising=False)

    def register(self, model: ClusterModel) -> None:
        # never worse, per broker: the limit (overloaded: the level for brokers over
        # their limit) from above, and the limit from below for brokers over it
        self.prepare(model)
        model.constrain(self.measure, self._lo, self._hi)

    def optimize(self, model: ClusterModel) -> None:
        if self.overload(model) is None:
            super().optimize(model)
            return
        # Nothing but this goal constrains its measure yet (hard goals run first and
        # it is the only one on it): widen to the levelling band, then register the
        # band of the state reached.
        self._lo, self._hi = self._bands(model, optimising=True)
        model.constrain(self.measure, self._lo, self._hi)
        super().optimize(model)
        self.register(model)

    def scale(self, model: ClusterModel) -> tuple[np.ndarray, str] | None:
        cap = model.snap.capacity[:, self.measure]
        return np.where(np.isfinite(cap) & (cap > 0), cap, np.nan), "capacity"

    def describe(self) -> dict:
        return {**super().describe(), "capacity_threshold": self.capacity_threshold}
