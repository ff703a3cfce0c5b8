"""What every goal shares, and the band-balancing machinery most goals reuse.

A goal is satisfied when each usable broker's measure sits inside a band [lo, hi]
(a capacity limit, a maximum count or a balance band around the ideal). The
optimiser calls `register` for hard goals before anything moves and for soft goals
once they are optimised; from then on every move must keep each broker inside the
band, or at least not move it further out (Cruise Control's acceptance rule).

`BandGoal.optimize` moves things cheapest first (docs/BALANCING.md §5):
 1. leadership changes (no data copied) when the measure follows leadership;
 2. replica moves, candidates ordered by most load per byte moved, each sent to
    the least utilised broker that every registered constraint accepts;
 3. swaps, when a move alone would break a constraint (e.g. a replica-count band).

`Goal.judge` is the one place a goal's violation is judged for readers outside the
engine (BALANCING.md §8 "goals[].start/end"): which brokers are out of the band, on
which side, by how much.
"""

from __future__ import annotations

import math

import numpy as np

from ..model import LEADER_BYTES_IN, LEADER_MEASURES, LEADERS, NW_OUT, ClusterModel
from .leader_chains import leader_chain, leader_single, room_swaps
from .pair_search import best_swap, best_trade

MAX_ROUNDS = 6
# consecutive rejected candidates after which a source broker is given up for a pass
MAX_FAILS = 200
MAX_IDLE_SOURCES = 32  # source brokers in a row without a move end a pass
SWAP_SOURCES = 64  # heaviest candidates of a source tried in swaps
SWAP_DESTS = 12  # least utilised brokers tried as swap partners
SWAP_PARTNERS = 6  # partner replicas tried per candidate
SWAP_FAILS = 200  # rejected swaps after which a pair of brokers is given up
PAIR_SWAPS = 64  # swaps judged on every measure (pair_search.py) per round at most
CHAINS = 64  # two-step leadership changes (leader_chains.py) per round at most
ROOM_SWAPS = 8  # leadership trades tried per broker to make room for a give
ROOM_BROKERS = 4  # brokers above the band, and takers each, tried for such trades
MAX_OFFENDERS = 10  # worst offenders listed per goal in a judgement


def tolerance(x: np.ndarray) -> np.ndarray:
    # relative slack so that float noise never counts as a violation
    return np.abs(x) * 1e-9 + 1e-9


class Goal:
    """One goal: a name, hard or soft, a violation measure and an optimiser."""

    name: str = ""
    hard: bool = False
    threshold: float | None = None

    def prepare(self, model: ClusterModel) -> None:
        """Compute targets from the current state, before `optimize`."""

    def register(self, model: ClusterModel) -> None:
        """Make this goal a constraint for every later move."""

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


def judgement(violation: float, offenders: list[dict], total: int) -> dict:
    return {
        "violated": violation > 0,
        "violation": violation,
        "offenders": offenders,
        "offenders_total": total,
    }


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def band_text(lo: float | None, hi: float | None, fmt: str) -> str:
    if lo is None and hi is None:
        return "band unbounded"
    if lo is None:
        return f"band up to {hi:{fmt}}"
    if hi is None:
        return f"band from {lo:{fmt}}"
    return f"band {lo:{fmt}}\u2013{hi:{fmt}}"


def broker_offender(
    *,
    broker: int,
    who: str = "",
    side: str,
    value: float,
    lo: float,
    hi: float,
    scale: float | None,
    scale_name: str,
) -> dict:
    """One broker out of its band. With a scale (the broker's fair share, or its
    capacity) the value and band are also given as multiples of it."""
    out: dict = {
        "broker": broker,
        "side": side,
        "value": float(value),
        "band": [_finite(lo), _finite(hi)],
    }
    if scale is not None and scale > 0 and math.isfinite(scale):
        ratio = value / scale
        rlo, rhi = _finite(lo / scale), _finite(hi / scale)
        out.update({"ratio": ratio, "ratio_of": scale_name, "band_ratio": [rlo, rhi]})
        what = f"{ratio:.2f} \u00d7 {scale_name}, {band_text(rlo, rhi, '.2f')}"
    else:
        what = f"{value:g}, {band_text(_finite(lo), _finite(hi), 'g')}"
    out["text"] = f"{who or f'broker {broker}'} {side} the band: {what}"
    return out


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


class BandGoal(Goal):
    """A goal on one per-broker measure with a per-broker band."""

    measure: int = 0

    def __init__(self) -> None:
        self._lo: np.ndarray | None = None
        self._hi: np.ndarray | None = None
        # the final leadership pass: reorder replica lists only, never copy data
        self.leadership_only = False

    # subclasses return the band for usable brokers; unusable ones get (-inf, inf)
    def band(self, model: ClusterModel) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _band(self, model: ClusterModel) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.band(model)
        lo = np.where(model.usable, lo, -np.inf)
        hi = np.where(model.usable, hi, np.inf)
        return lo, hi

    def prepare(self, model: ClusterModel) -> None:
        self._lo, self._hi = self._band(model)

    def register(self, model: ClusterModel) -> None:
        if self._lo is None:
            self.prepare(model)
        model.tighten(self.measure, None if self.hard else self._lo, self._hi)

    def scale(self, model: ClusterModel) -> tuple[np.ndarray, str] | None:
        """Per broker, what a judgement states values relative to: its fair share of
        the total ("mean") for balance goals, its capacity for capacity goals."""
        return None

    def _outside(self, model: ClusterModel) -> tuple[np.ndarray, ...]:
        lo, hi = self._band(model)
        x = model.load[:, self.measure]
        u = model.usable
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
                moved += self._leaders(model, lo, hi)
                if self.measure == LEADERS and self._out_of_band(model, lo, hi):
                    moved += self._leader_chains(model, lo, hi)
            if can_move:
                moved += self._replicas(model, lo, hi, shed=True)
                moved += self._replicas(model, lo, hi, shed=False)
                # a swap copies two replicas: not worth it for what leadership can fix
                if self.measure not in (LEADERS, LEADER_BYTES_IN) and self._out_of_band(
                    model, lo, hi
                ):
                    moved += self._swaps(model, lo, hi)
                    # last resort, once nothing cheaper moves: swaps weighed on every
                    # measure at once
                    if moved == 0 and self._out_of_band(model, lo, hi):
                        moved += self._pair_swaps(model, lo, hi)
            if moved == 0:
                return

    def _out_of_band(self, model: ClusterModel, lo: np.ndarray, hi: np.ndarray) -> bool:
        x = model.load[:, self.measure]
        over = x > hi + tolerance(hi)
        under = (x < lo - tolerance(lo)) & model.dest
        return bool(((over | under) & model.usable).any())

    def _weights(self, model: ClusterModel, ps: np.ndarray, ks: np.ndarray) -> np.ndarray:
        j = self.measure
        return model.fvec[ps, j] + np.where(ks == 0, model.lvec[ps, j], 0.0)

    def _candidate_order(
        self, model: ClusterModel, ps: np.ndarray, w: np.ndarray, s: int
    ) -> np.ndarray:
        # most load per byte the move adds to the plan first
        return np.argsort(-(w / (model.move_cost(ps, s) + 1.0)), kind="stable")

    def _dest_score(
        self, model: ClusterModel, p: int, after: np.ndarray, norm: np.ndarray
    ) -> np.ndarray:
        """Lower is better: the destination's utilisation after the move."""
        return after / norm

    def _leader_order(self, model: ClusterModel, ps: np.ndarray, w: np.ndarray) -> np.ndarray:
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

    def _leaders(self, model: ClusterModel, lo: np.ndarray, hi: np.ndarray) -> int:
        """Move leadership off brokers above the band, then onto brokers below it."""
        j = self.measure
        load = model.load
        norm = model.norm[:, j]
        assign = model.assign
        index = model.replicas_by_broker()
        moved = 0
        x = load[:, j]
        over = np.flatnonzero(model.usable & (x > hi + tolerance(hi)))
        over = over[np.argsort(-(x[over] / norm[over]), kind="stable")]
        for s in over.tolist():
            ps, ks = model.cells_of(index, s)
            sel = (ks == 0) & ~model.frozen[ps] & model.leader_movable[ps]
            ps = ps[sel]
            w = model.lvec[ps, j]
            keep = w > 0
            ps, w = ps[keep], w[keep]
            fails = 0
            for i in self._leader_order(model, ps, w).tolist():
                if load[s, j] <= hi[s] + tolerance(hi[s]) or fails > MAX_FAILS:
                    break
                p = int(ps[i])
                wi = float(w[i])
                if assign[p, 0] != s or load[s, j] - wi < lo[s]:
                    fails += 1
                    continue
                best_k, best = -1, math.inf
                if self.leadership_only:
                    # where the band is out of reach, still level: b may end past
                    # the band while it ends no higher than s (the spread strictly
                    # narrows, so no leadership goes back and forth)
                    keep = (load[s, j] - wi) / norm[s]
                for k in range(1, model.rf_l[p]):
                    b = int(assign[p, k])
                    after = load[b, j] + wi
                    cap = hi[b]
                    if self.leadership_only:
                        level = keep * norm[b]
                        cap = max(cap, level + tolerance(level))
                    if after > cap or not model.leader_move_ok(p, k):
                        continue
                    score = after / norm[b]
                    if score < best:
                        best_k, best = k, score
                if best_k < 0:
                    fails += 1
                    continue
                fails = 0
                model.move_leader(p, best_k, self.name)
                moved += 1
        under = np.flatnonzero(model.leader_dest & (x < lo - tolerance(lo)))
        under = under[np.argsort(x[under] / norm[under], kind="stable")]
        for d in under.tolist():
            ps, ks = model.cells_of(index, d)
            sel = (ks > 0) & ~model.frozen[ps] & model.leader_movable[ps]
            ps, ks = ps[sel], ks[sel]
            w = model.lvec[ps, j]
            leaders = assign[ps, 0]
            # take leadership from the most utilised current leaders first; never from
            # a broker that is not usable (dead or being removed): that would change
            # the usable brokers' total, so the band an earlier count goal met moves
            keep = (w > 0) & model.usable[leaders] & (x[leaders] - w >= lo[leaders])
            ps, ks, w = ps[keep], ks[keep], w[keep]
            fails = 0
            for i in self._leader_order(model, ps, w).tolist():
                if load[d, j] >= lo[d] - tolerance(lo[d]) or fails > MAX_FAILS:
                    break
                p, k = int(ps[i]), int(ks[i])
                wi = float(w[i])
                a = int(assign[p, 0])
                if (
                    assign[p, k] != d
                    or load[d, j] + wi > hi[d]
                    or load[a, j] - wi < lo[a]
                    or load[a, j] / norm[a] <= (load[d, j] + wi) / norm[d]
                    or not model.leader_move_ok(p, k)
                ):
                    fails += 1
                    continue
                fails = 0
                model.move_leader(p, k, self.name)
                moved += 1
        return moved

    def _replicas(self, model: ClusterModel, lo: np.ndarray, hi: np.ndarray, *, shed: bool) -> int:
        """shed: move replicas off brokers above the band to the least utilised
        acceptable brokers. Otherwise (fill): move replicas from the most utilised
        brokers onto brokers below the band."""
        j = self.measure
        load = model.load
        norm = model.norm[:, j]
        assign = model.assign
        x = load[:, j]
        mid = (np.where(np.isfinite(lo), lo, 0.0) + hi) / 2.0
        if shed:
            sources = np.flatnonzero(model.usable & (x > hi + tolerance(hi)))
            stop = hi
            dest_filter = model.usable  # the model's mask knows where each replica may go
        else:
            under = model.dest & (x < lo - tolerance(lo))
            if not under.any():
                return 0
            sources = np.flatnonzero(model.usable & np.isfinite(mid) & (x > mid))
            stop = mid
            dest_filter = under
        if sources.shape[0] == 0:
            return 0
        sources = sources[np.argsort(-(x[sources] / norm[sources]), kind="stable")]
        index = model.replicas_by_broker()
        moved = 0
        idle = 0  # sources in a row that gave nothing: the rest likely won't either
        for s in sources.tolist():
            if idle >= MAX_IDLE_SOURCES:
                break
            if not shed:
                under = model.dest & (x < lo - tolerance(lo))
                if not under.any():
                    break
                dest_filter = under
            room = np.where(dest_filter & model.dest, hi - x, -np.inf)
            max_room = float(room.max())
            if max_room <= 0:
                break  # no broker open to new replicas has room left
            moved_before = moved
            ps, ks = model.cells_of(index, s)
            w = self._weights(model, ps, ks)
            ok = (w > 0) & (w <= max_room) & model.movable[ps, ks] & ~model.frozen[ps]
            if np.isfinite(lo[s]):
                ok &= x[s] - w >= lo[s]
            ps, ks, w = ps[ok], ks[ok], w[ok]
            fails = 0
            for i in self._candidate_order(model, ps, w, s).tolist():
                if x[s] <= stop[s] + tolerance(stop[s]) or fails > MAX_FAILS:
                    break
                p, k = int(ps[i]), int(ks[i])
                wi = float(w[i])
                if assign[p, k] != s or x[s] - wi < lo[s]:
                    fails += 1
                    continue
                mask = model.move_dest_mask(p, k)
                if mask is None:
                    fails += 1
                    continue
                after = x + wi
                mask &= dest_filter & (after <= hi)
                if not np.count_nonzero(mask):  # faster than mask.any() here
                    fails += 1
                    continue
                d = int(np.argmin(np.where(mask, self._dest_score(model, p, after, norm), np.inf)))
                if not shed and after[d] / norm[d] >= x[s] / norm[s]:
                    fails += 1
                    continue
                fails = 0
                model.move_replica(p, k, d, self.name)
                moved += 1
                if not shed and not (x[d] < lo[d] - tolerance(lo[d])):
                    dest_filter = dest_filter.copy()
                    dest_filter[d] = False
                    if not dest_filter.any():
                        break
            idle = idle + 1 if moved == moved_before else 0
        return moved

    def _swaps(self, model: ClusterModel, lo: np.ndarray, hi: np.ndarray) -> int:
        """Trade a heavy replica of a broker out of band for a light one of a partner."""
        j = self.measure
        load = model.load
        norm = model.norm[:, j]
        x = load[:, j]
        util = x / norm
        index = model.replicas_by_broker()
        cache: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        moved = 0
        pairs: list[tuple[int, bool]] = []
        over = np.flatnonzero(model.usable & (x > hi + tolerance(hi)))
        pairs += [(int(b), True) for b in over[np.argsort(-util[over], kind="stable")]]
        under = np.flatnonzero(model.usable & model.dest & (x < lo - tolerance(lo)))
        pairs += [(int(b), False) for b in under[np.argsort(util[under], kind="stable")]]
        idle = 0
        for b, is_over in pairs:
            if idle >= MAX_IDLE_SOURCES:
                break
            moved_before = moved
            # heavy side s gives a replica of weight wa, light side d gives wb < wa
            if is_over:
                # brokers open to new replicas first (in add-brokers only those can take
                # load for good), then the least utilised
                partners = np.flatnonzero(model.usable & (util < util[b]))
                order = np.lexsort((util[partners], ~model.dest[partners]))
                partners = partners[order][:SWAP_DESTS]
            else:
                partners = np.flatnonzero(model.usable & (util > util[b]))
                partners = partners[np.argsort(-util[partners], kind="stable")][:SWAP_DESTS]
            for other in partners.tolist():
                s, d = (b, other) if is_over else (other, b)
                if not self._needs(x, lo, hi, b):
                    break
                moved += self._swap_pair(model, index, cache, s, d, lo, hi)
            idle = idle + 1 if moved == moved_before else 0
        return moved

    def _leader_chains(self, model: ClusterModel, lo: np.ndarray, hi: np.ndarray) -> int:
        """Leader counts a single change can't level: two changes in a row through a
        middle broker whose count stays (leader_chains.py), from a broker above the
        band or to one below it, the most / least loaded partners first."""
        x = model.load[:, self.measure]
        moved = 0
        while moved < CHAINS:
            tol = tolerance(hi)
            ok = model.usable & model.leader_dest
            over = np.flatnonzero(model.usable & (x > hi + tol))
            under = np.flatnonzero(ok & (x < lo - tolerance(lo)))
            pairs: list[tuple[int, int]] = []
            for a in over[np.lexsort((over, -x[over]))].tolist():
                takers = np.flatnonzero(ok & (x + 1 <= hi + tol) & (x + 1 <= x[a] - 1 + tol))
                pairs += [(a, c) for c in takers[np.lexsort((takers, x[takers]))].tolist()]
            for c in under[np.lexsort((under, x[under]))].tolist():
                givers = np.flatnonzero(
                    model.usable & (x - 1 >= lo - tolerance(lo)) & (x - 1 >= x[c] + 1 - tol)
                )
                pairs += [(a, c) for a in givers[np.lexsort((givers, -x[givers]))].tolist()]
            found = None
            memo: dict = {}  # the model doesn't change until a chain is found
            for a, c in pairs:
                found = leader_chain(model, a, c, memo)
                if found is not None:
                    break
            if found is None:
                if not self._room_then_give(model, over, x, hi):
                    break
                moved += 1
                continue
            p1, k1, p2, k2 = found
            model.move_leader(p1, k1, self.name)
            model.move_leader(p2, k2, self.name)
            moved += 1
        return moved

    def _room_then_give(
        self, model: ClusterModel, over: np.ndarray, x: np.ndarray, hi: np.ndarray
    ) -> bool:
        """A broker above the band that can't give a leadership (it would fall under
        another band's lower edge, or the taker would go over one) first trades a
        leadership of its own, or the taker's, for one lighter or heavier (counts
        unchanged), then gives one, directly or through a middle broker; the trade
        is undone when no give follows."""
        tol = tolerance(hi)
        ok = model.usable & model.leader_dest
        taker_trades: dict[int, list[tuple[int, int, int, int]]] = {}
        # a search per broker pair: the most loaded few brokers and takers only
        for a in over[np.lexsort((over, -x[over]))][:ROOM_BROKERS].tolist():
            takers = np.flatnonzero(ok & (x + 1 <= hi + tol) & (x + 1 <= x[a] - 1 + tol))
            takers = takers[np.lexsort((takers, x[takers]))][:ROOM_BROKERS].tolist()
            trades = [(t, None) for t in room_swaps(model, a)[:ROOM_SWAPS]]
            for c in takers:
                if c not in taker_trades:  # takers recur across brokers; trades roll back
                    taker_trades[c] = room_swaps(model, c, more=False)[:ROOM_SWAPS]
                trades += [(t, c) for t in taker_trades[c]]
            for (p, k, q, kq), only in trades:
                model.begin()
                model.move_leader(p, k, self.name)
                model.move_leader(q, kq, self.name)
                memo: dict = {}
                for c in takers if only is None else [only]:
                    single = leader_single(model, a, c)
                    if single is not None:
                        model.move_leader(*single, self.name)
                        model.commit()
                        return True
                    chain = leader_chain(model, a, c, memo)
                    if chain is not None:
                        model.move_leader(chain[0], chain[1], self.name)
                        model.move_leader(chain[2], chain[3], self.name)
                        model.commit()
                        return True
                model.rollback()
        return False

    def _pair_swaps(self, model: ClusterModel, lo: np.ndarray, hi: np.ndarray) -> int:
        """Swaps weighed on every measure at once (pair_search.py), worst broker first,
        each with the partners on the other side of it, least / most utilised first."""
        j = self.measure
        x = model.load[:, j]
        norm = model.norm[:, j]
        moved = 0
        # broker pairs that found nothing: asked again only once a swap touched either
        failed: set[tuple[int, int]] = set()
        while moved < PAIR_SWAPS:
            util = x / norm
            over = model.usable & (x > hi + tolerance(hi))
            under = model.usable & model.dest & (x < lo - tolerance(lo))
            dist = np.where(over, x - hi, 0.0) + np.where(under, lo - x, 0.0)
            bad = np.flatnonzero(over | under)
            bad = bad[np.lexsort((bad, -(dist[bad] / norm[bad])))]
            found = None
            for b in bad.tolist():
                if over[b]:
                    partners = np.flatnonzero(model.usable & (util < util[b]))
                    partners = partners[np.lexsort((partners, util[partners]))][:SWAP_DESTS]
                else:
                    partners = np.flatnonzero(model.usable & (util > util[b]))
                    partners = partners[np.lexsort((partners, -util[partners]))][:SWAP_DESTS]
                for other in partners.tolist():
                    s, d = (b, other) if over[b] else (other, b)
                    if (s, d) in failed:
                        continue
                    found = best_swap(model, s, d, j, lo, hi)
                    if found is not None:
                        break
                    trade = best_trade(model, s, d, j, lo, hi)
                    if trade is not None:
                        found = trade
                        break
                    failed.add((s, d))
                if found is not None:
                    break
            if found is None:
                break
            if isinstance(found, list):  # a one-for-two trade (pair_search.best_trade)
                touched = {int(model.assign[p, k]) for p, k, _ in found}
                failed = {pair for pair in failed if not touched & set(pair)}
                for p, k, to in found:
                    model.move_replica(p, k, to, self.name)
                model.counter(self.name).swaps += 1
                moved += 1
                continue
            p1, k1, p2, k2 = found
            d, s = int(model.assign[p2, k2]), int(model.assign[p1, k1])
            failed = {pair for pair in failed if s not in pair and d not in pair}
            model.move_replica(p1, k1, d, self.name)
            model.move_replica(p2, k2, s, self.name)
            model.counter(self.name).swaps += 1
            moved += 1
        return moved

    def _needs(self, x: np.ndarray, lo: np.ndarray, hi: np.ndarray, b: int) -> bool:
        return bool(x[b] > hi[b] + tolerance(hi[b]) or x[b] < lo[b] - tolerance(lo[b]))

    def _swap_pair(
        self,
        model: ClusterModel,
        index: tuple[np.ndarray, np.ndarray],
        cache: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]],
        s: int,
        d: int,
        lo: np.ndarray,
        hi: np.ndarray,
    ) -> int:
        x = model.load[:, self.measure]
        assign = model.assign

        def cands(b: int, to: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            if b not in cache:  # b's replicas as of this pass; moved ones drop out below
                ps, ks = model.cells_of(index, b)
                keep = model.movable[ps, ks] & ~model.frozen[ps]
                ps, ks = ps[keep], ks[keep]
                cache[b] = (ps, ks, self._weights(model, ps, ks))
            ps, ks, w = cache[b]
            ok = assign[ps, ks] == b
            if not model.dest[to]:  # only replicas that came from `to` may go back there
                ok &= (model.initial[ps] == to).any(axis=1)
            return ps[ok], ks[ok], w[ok]

        pa, ka, wa = cands(s, d)
        pb, kb, wb = cands(d, s)
        if pa.shape[0] == 0 or pb.shape[0] == 0:
            return 0
        order_b = np.argsort(wb, kind="stable")
        pb, kb, wb = pb[order_b], kb[order_b], wb[order_b]
        moved = fails = 0
        for i in np.argsort(-wa, kind="stable")[:SWAP_SOURCES].tolist():
            if fails > SWAP_FAILS:
                break
            # how much weight may flow from s to d, and how much s/d want
            room = min(hi[d] - x[d], x[s] - lo[s])
            want = max(x[s] - hi[s], lo[d] - x[d])
            if room <= 0 or want <= 0:
                break
            wi = float(wa[i])
            p1, k1 = int(pa[i]), int(ka[i])
            if assign[p1, k1] != s:
                continue
            # partners whose weight leaves a transfer in (0, room], closest to `want` first
            lo_i = int(np.searchsorted(wb, wi - room, side="left"))
            hi_i = int(np.searchsorted(wb, wi, side="left"))
            if hi_i <= lo_i:
                continue
            target = wi - min(want, room)
            mid = int(np.searchsorted(wb, target))
            tried = 0
            for jdx in _around(mid, lo_i, hi_i):
                if tried >= SWAP_PARTNERS:
                    break
                tried += 1
                p2, k2 = int(pb[jdx]), int(kb[jdx])
                if assign[p2, k2] != d:
                    continue
                net = wi - float(wb[jdx])
                if net <= 0 or x[d] + net > hi[d] or x[s] - net < lo[s]:
                    continue
                if not model.swap_ok(p1, k1, p2, k2):
                    fails += 1
                    continue
                model.move_replica(p1, k1, d, self.name)
                model.move_replica(p2, k2, s, self.name)
                model.counter(self.name).swaps += 1
                moved += 1
                break
        return moved


def _around(mid: int, lo: int, hi: int):
    """Indices in [lo, hi) ordered by distance from mid."""
    mid = min(max(mid, lo), hi - 1)
    yield mid
    step = 1
    while mid - step >= lo or mid + step < hi:
        if mid + step < hi:
            yield mid + step
        if mid - step >= lo:
            yield mid - step
        step += 1


class CountBandGoal(BandGoal):
    """A soft goal on a per-broker count (replicas, leaders): within ⌊ideal⌋..⌈ideal⌉,
    widened by the threshold."""

    hard = False

    def __init__(self, threshold: float) -> None:
        super().__init__()
        self.threshold = threshold

    def band(self, model: ClusterModel) -> tuple[np.ndarray, np.ndarray]:
        total = float(model.load[model.usable, self.measure].sum())
        lo, hi = count_band(total, model.n_usable, self.threshold)
        b = model.n_brokers
        return np.full(b, lo), np.full(b, hi)

    def scale(self, model: ClusterModel) -> tuple[np.ndarray, str] | None:
        total = float(model.load[model.usable, self.measure].sum())
        return np.full(model.n_brokers, total / max(model.n_usable, 1)), "mean"
