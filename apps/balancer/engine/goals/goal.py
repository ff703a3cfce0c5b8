"""The interface every goal implements: a name, hard or soft, a violation measure, an optimiser.

The optimiser calls `register` for a hard goal before anything moves, for a soft
goal once it is optimised; from then on every move must keep each broker inside the
goal's bounds, or at least not move it further out (Cruise Control's acceptance
rule).
"""

from __future__ import annotations

from ..model import ClusterModel
from .judging import judgement


class Goal:
    """One goal: a name, hard or soft, a violation measure and an optimiser."""

    name: str = ""
    hard: bool = False
    threshold: float | None = None
    # a goal on the log dirs of each broker (intra_broker.py), run after the others
    disk_level: bool = False

    def prepare(self, model: ClusterModel) -> None:
        """Compute targets from the current state, before `optimize`."""

    def register(self, model: ClusterModel) -> None:
        """Make this goal a constraint for every later move."""

    def finish(self, model: ClusterModel) -> None:
        """Last touches once every goal and pass has moved (follower order only)."""

    def violation(self, model: ClusterModel) -> float:
        raise NotImplementedError

    def optimize(self, model: ClusterModel) -> None:
        raise NotImplementedError

    def describe(self) -> dict:
        return {"name": self.name, "hard": self.hard, "threshold": self.threshold}

    def judge(self, model: ClusterModel) -> dict:
        """The goal's violation on the model as it stands: violated or not, how much
        (the `violation` measure) and the worst offenders, worst first."""
        v = self.violation(model)
        return judgement(v, [], 0)
