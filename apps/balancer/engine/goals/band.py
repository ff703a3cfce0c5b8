"""The band optimiser: a goal keeping one per-broker measure inside a per-broker band.

A band goal is satisfied when each usable broker's measure sits inside [lo, hi] (a
capacity limit, a maximum count or a balance band around the ideal). Once
registered, every later move must keep each broker inside the band, or at least not
move it further out.

`BandGoal.optimize` moves things cheapest first (docs/BALANCING.md §5):
 1. leadership changes (no data copied) when the measure follows leadership
    (band_leaders.py);
 2. replica moves, candidates ordered by most load per byte moved, each sent to
    the least utilised broker that every registered constraint accepts
    (band_replicas.py);
 3. swaps, when a move alone would break a constraint (e.g. a replica-count band)
    (band_swaps.py).
"""

from __future__ import annotations

import numpy as np

from ..measures import LEADER_BYTES_IN, LEADER_MEASURES, LEADERS, NW_OUT
from ..model import ClusterModel
from .band_leaders import leader_chain_moves, leadership_moves
from .band_replicas import replica_moves
from .band_swaps import pair_swap_moves, swap_moves
from .goal import Goal
from .judging import MAX_OFFENDERS, broker_offender, judgement
from .leader_levelling import leader_level_moves
from .limits import MAX_ROUNDS
from .tolerance import tolerance


class BandGoal(Goal):
    """A goal on one per-broker measure with a per-broker band."""

    measure: int = 0

    def __init__(self) -> None:
        self._lo: np.ndarray | None = None
        self._hi: np.ndarray | None = None
        # the final leadership pass: reorder replica lists only, never copy data
        self.leadership_only = False

    # subclasses return the band for the brokers the measure is shared among
    # (model.sharing); the others get (-inf, inf)
    def band(self, model: ClusterModel) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _band(self, model: ClusterModel) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.band(model)
        sharing = model.sharing(self.measure)
        lo = np.where(sharing, lo, -np.inf)
        hi = np.where(sharing, hi, np.inf)
        return lo, hi

    def prepare(self, model: ClusterModel) -> None:
        self._lo, self._hi = self._band(model)

    def register(self, model: ClusterModel) -> None:
        if self._lo is None:
            self.prepare(model)
        # network out in the leadership pass holds its top only: the leader count
        # after it may still take leadership from a broker with little network out
        keep_floor = not self.hard and not (self.leadership_only and self.measure == NW_OUT)
        model.tighten(self.measure, self._lo if keep_floor else None, self._hi)

    def scale(self, model: ClusterModel) -> tuple[np.ndarray, str] | None:
        """Per broker, what a judgement states values relative to: its fair share of
        the total ("mean") for balance goals, its capacity for capacity goals."""
        return None

    def _outside(self, model: ClusterModel) -> tuple[np.ndarray, ...]:
        lo, hi = self._band(model)
        x = model.load[:, self.measure]
        u = model.sharing(self.measure)
        over = np.where(u, np.maximum(x - hi - tolerance(hi), 0.0), 0.0)
        under = np.where(u, np.maximum(lo - x - tolerance(lo), 0.0), 0.0)
        return x, lo, hi, over, under

    def violation(self, model: ClusterModel) -> float:
        _, _, _, over, under = self._outside(model)
        return float((over + under).sum())

    def judge(self, model: ClusterModel) -> dict:
        x, lo, hi, over, under = self._outside(model)
        bad = np.flatnonzero((over > 0) | (under > 0))
        # worst first, in utilisation units so brokers of different capacity compare
        dist = (over + under)[bad] / model.norm[bad, self.measure]
        bad = bad[np.lexsort((bad, -dist))]
        sc = self.scale(model)
        ids = model.snap.broker_ids
        offenders = [
            broker_offender(
                broker=int(ids[b]),
                side="above" if over[b] > 0 else "below",
                value=float(x[b]),
                lo=float(lo[b]),
                hi=float(hi[b]),
                scale=None if sc is None else float(sc[0][b]),
                scale_name="" if sc is None else sc[1],
            )
            for b in bad[:MAX_OFFENDERS].tolist()
        ]
        return judgement(float((over + under).sum()), offenders, int(bad.shape[0]))

    # ------------------------------------------------------------ optimisation
    def optimize(self, model: ClusterModel) -> None:
        if self._lo is None:
            self.prepare(model)
        lo, hi = self._lo, self._hi
        assert lo is not None and hi is not None
        can_lead = self.measure in LEADER_MEASURES and bool(model.leader_dest.any())
        can_move = bool(model.movable.any()) and not self.leadership_only
        for _ in range(MAX_ROUNDS):
            if not self._out_of_band(model, lo, hi):
                return
            moved = 0
            if can_lead:
                moved += leadership_moves(self, model, lo=lo, hi=hi)
                if self.measure == LEADERS and self._out_of_band(model, lo, hi):
                    moved += leader_chain_moves(self, model, lo=lo, hi=hi)
                elif self.leadership_only and self._out_of_band(model, lo, hi):
                    moved += leader_level_moves(self, model, lo=lo, hi=hi)
            if can_move:
                moved += self.replica_moves(model, lo=lo, hi=hi, shed=True)
                moved += self.replica_moves(model, lo=lo, hi=hi, shed=False)
                # a swap copies two replicas: not worth it for what leadership can fix
                if self.measure not in (LEADERS, LEADER_BYTES_IN) and self._out_of_band(
                    model, lo, hi
                ):
                    moved += swap_moves(self, model, lo=lo, hi=hi)
                    # last resort, once nothing cheaper moves: swaps weighed on every
                    # measure at once
                    if moved == 0 and self._out_of_band(model, lo, hi):
                        moved += pair_swap_moves(self, model, lo=lo, hi=hi)
            if moved == 0:
                return

    def _out_of_band(self, model: ClusterModel, lo: np.ndarray, hi: np.ndarray) -> bool:
        x = model.load[:, self.measure]
        over = x > hi + tolerance(hi)
        under = (x < lo - tolerance(lo)) & model.dest
        return bool(((over | under) & model.usable).any())

    # ------------------------------------------------ hooks the move steps call
    def replica_moves(
        self, model: ClusterModel, *, lo: np.ndarray, hi: np.ndarray, shed: bool
    ) -> int:
        """The replica step (band_replicas.py); a goal may run a faster one that
        moves the same replicas."""
        return replica_moves(self, model, lo=lo, hi=hi, shed=shed)

    def weights(self, model: ClusterModel, ps: np.ndarray, ks: np.ndarray) -> np.ndarray:
        """Per replica cell (p, k), how much of this measure moving it takes along."""
        j = self.measure
        return model.fvec[ps, j] + np.where(ks == 0, model.lvec[ps, j], 0.0)

    def candidate_order(
        self, model: ClusterModel, ps: np.ndarray, w: np.ndarray, s: int
    ) -> np.ndarray:
        # most load per byte the move adds to the plan first
        return np.argsort(-(w / (model.move_cost(ps, s) + 1.0)), kind="stable")

    def dest_score(
        self, model: ClusterModel, p: int, after: np.ndarray, norm: np.ndarray
    ) -> np.ndarray:
        """Lower is better: the destination's utilisation after the move (a new
        array: the replica step writes into it)."""
        return after / norm

    def leader_order(self, model: ClusterModel, ps: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Leadership candidates: most of this measure per unit of network out moved
        along with it (network out itself: largest first)."""
        if self.measure == NW_OUT:
            order = np.argsort(-w, kind="stable")
        else:
            order = np.argsort(-(w / (model.lout[ps] + 1.0)), kind="stable")
        if self.leadership_only:
            # partitions the plan lists anyway first: a reorder there adds no entry
            untouched = ~(model.assign[ps] != model.initial[ps]).any(axis=1)
            order = order[np.argsort(untouched[order], kind="stable")]
        return order
