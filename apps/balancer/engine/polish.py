"""The polish pass: bring the busiest broker of each balance measure further down
than the goals' bands ask, for few bytes (BALANCING.md §5).

A goal stops as soon as every broker is inside its band, so the busiest broker ends
just inside the threshold. After the goals, the leadership pass and the movement
pass, in `full` mode, this pass levels each measure whose distribution goal the
request runs towards a tighter target (1 + 3/4 of the threshold's margin):
network out first by leadership changes alone (no data copied), then replica
counts, network in, network out and disk by replica moves, the most of the
measure per byte added to the plan first (a replica the plan already copies moves
on for free; one going back to a broker that held it saves its bytes), within a
byte budget.

Every step moves load off the busiest broker onto one that ends below it, so the
busiest broker of the measure only comes down; every registered constraint holds
(hard goals, bands, racks, per-topic counts) and no other measure ends above its
busiest broker or below its least busy one: no balance figure gets worse. The
movement pass runs again afterwards (optimizer.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np

from .goals import Goal
from .measures import DISK, NW_IN, NW_OUT, REPLICAS
from .model import ClusterModel
from .trim import hold_balance

# the distribution goal each measure serves; its moves are reported under it
GOAL_OF = {
    NW_IN: "network-in-distribution",
    NW_OUT: "network-out-distribution",
    DISK: "disk-distribution",
    REPLICAS: "replica-distribution",
}
# replica moves in this order, after network out's leadership changes
REPLICA_ORDER = (REPLICAS, NW_IN, NW_OUT, DISK)
TARGET_SHARE = 0.75  # aim at 1 + 3/4 of the threshold's margin (1.075 for 1.10)
BUDGET_SHARE = 0.001  # bytes it may add to the plan: 0.1 % of all bytes on disk
MAX_STEPS = 5_000  # moves per measure
STEP = 0.01  # of the ideal: how far below the next busiest broker a paid move may go
SWAP_PARTNERS = 4  # least busy brokers tried as swap partners
SWAP_LIGHT = 8  # their replicas tried, fewest bytes first
SWAP_HEAVY = 64  # replicas of the busiest broker tried in swaps
MAX_TRIES = 256  # candidates tried on the busiest broker before giving up
MOVE_ONE_BY_ONE = 16  # candidates tried before the rest are screened all at once
EPS = 1e-9


def polish(model: ClusterModel, goals: Sequence[Goal]) -> int:
    """Level the measures further; returns the replica and leadership moves made."""
    u = model.usable
    # the other modes move only what they must (add-brokers: onto the new brokers)
    if model.setup.mode != "full" or not u.any():
        return 0
    ran = {g.name: g.threshold for g in goals if not g.hard and g.threshold is not None}
    measures = {j: ran[name] for j, name in GOAL_OF.items() if name in ran}
    if not measures:
        return 0
    hold_balance(model)
    budget = [BUDGET_SHARE * float(model.load[u, DISK].sum())]
    moved = 0
    if NW_OUT in measures and model.leader_dest.any():
        moved += _leaders(model, NW_OUT, _stop(model, NW_OUT, measures[NW_OUT]))
        _hold_max(model, NW_OUT)
    for j in REPLICA_ORDER:
        if j in measures and model.movable.any():
            moved += _replicas(model, j, _stop(model, j, measures[j]), budget)
            _hold_max(model, j)
    return moved


def _util(model: ClusterModel, j: int) -> np.ndarray:
    return np.where(model.usable, model.load[:, j] / model.norm[:, j], -np.inf)


def _ideal(model: ClusterModel, j: int) -> float:
    u = model.usable
    return float(model.load[u, j].sum()) / float(model.norm[u, j].sum())


def _stop(model: ClusterModel, j: int, threshold: float) -> float:
    """Utilisation at which the busiest broker is level enough."""
    ideal = _ideal(model, j)
    stop = ideal * (1.0 + (threshold - 1.0) * TARGET_SHARE)
    if j == REPLICAS:  # counts: nothing beats the ceiling of the ideal
        stop = max(stop, math.ceil(ideal - EPS))
    return stop


def _hold_max(model: ClusterModel, j: int) -> None:
    """What this pass gained on measure j, no later step may give away."""
    top = float(_util(model, j).max())
    model.tighten(j, None, np.where(model.usable, top * model.norm[:, j], np.inf))


def _leaders(model: ClusterModel, j: int, stop: float) -> int:
    """Hand leadership from the busiest broker to another replica's broker that ends
    below it; the least busy outcome for the pair first."""
    assign, norm, lvec = model.assign, model.norm[:, j], model.lvec
    K = model.K
    goal = GOAL_OF[j]
    moved = 0
    for _ in range(MAX_STEPS):
        util = _util(model, j)
        s = int(np.argmax(util))
        top = float(util[s])
        if top <= stop * (1 + EPS):
            break
        ps = model.led_by(s)
        ps = ps[model.leader_movable[ps] & ~model.frozen[ps]]
        w = lvec[ps, j]
        ps, w = ps[w > 0], w[w > 0]
        if ps.shape[0] == 0 or K < 2:
            break
        others = assign[ps, 1:]
        valid = (others >= 0) & (np.arange(1, K)[None, :] < model.rf[ps][:, None])
        ob = np.maximum(others, 0)
        valid &= model.leader_dest[ob]
        d_after = util[ob] + w[:, None] / norm[ob]
        s_after = top - w / norm[s]
        score = np.maximum(d_after, s_after[:, None])
        score = np.where(valid & (score < top * (1 - EPS)), score, np.inf)
        flat = np.argsort(score, axis=None, kind="stable")[:MAX_TRIES]
        done = False
        for f in flat.tolist():
            i, kk = divmod(f, K - 1)
            if not math.isfinite(score[i, kk]):
                break
            p, k = int(ps[i]), kk + 1
            if model.leader_move_ok(p, k):
                model.move_leader(p, k, goal)
                moved += 1
                done = True
                break
        if not done:
            break
    return moved


def _added(model: ClusterModel, p: int, frm: int, to: int) -> float:
    """Bytes moving p's replica from `frm` to `to` adds to the net plan (negative: a
    replica going back to a broker that held it at the start)."""
    home = model.initial[p, : model.rf_l[p]].tolist()
    return float(model.size[p]) * (int(to not in home) - int(frm not in home))


def _weights(model: ClusterModel, j: int, ps: np.ndarray, ks: np.ndarray) -> np.ndarray:
    return model.fvec[ps, j] + np.where(ks == 0, model.lvec[ps, j], 0.0)


class _Cells:
    """Per broker, its movable replica cells as of the start of a measure's turn,
    with their weight and the bytes moving each off it adds, in candidate order
    (computed once per broker; cells that left since are dropped on every call)."""

    def __init__(self, model: ClusterModel, j: int, index: tuple[np.ndarray, np.ndarray]) -> None:
        self.model, self.j, self.index = model, j, index
        self.cache: dict[int, tuple[np.ndarray, ...]] = {}

    def on(self, b: int) -> tuple[np.ndarray, ...]:
        m = self.model
        if b not in self.cache:
            ps, ks = m.cells_of(self.index, b)
            keep = m.movable[ps, ks] & ~m.frozen[ps]
            ps, ks = ps[keep], ks[keep]
            w, cost = _weights(m, self.j, ps, ks), m.move_cost(ps, b)
            # candidate order once per broker: most of the measure per byte added
            # to the plan, then the heaviest
            order = np.lexsort((ps, -w, -(w / (cost + 1.0))))
            ps, ks = ps[order], ks[order]
            # each cell's place in the flat assignment: take() there is cheaper than
            # indexing by (partition, slot)
            flat = ps.astype(np.int64) * m.K + ks
            self.cache[b] = (ps, ks, w[order], cost[order], flat)
        ps, ks, w, cost, flat = self.cache[b]
        here = m.assign.take(flat) == b
        return ps[here], ks[here], w[here], cost[here]


def _replicas(model: ClusterModel, j: int, stop: float, budget: list[float]) -> int:
    """Move replicas off the busiest broker onto the broker ending least busy, most
    of the measure per byte added to the plan first; when no single move is
    accepted (typically: the broker sits at the replica-count band's lower edge),
    swap one of its replicas for a lighter one of a less busy broker."""
    norm = model.norm[:, j]
    index = model.replicas_by_broker()
    cells = _Cells(model, j, index)
    moved = 0
    ideal = _ideal(model, j)
    for _ in range(MAX_STEPS):
        util = _util(model, j)
        s = int(np.argmax(util))
        top = float(util[s])
        if top <= stop * (1 + EPS):
            break
        ps, ks, w, cost = cells.on(s)
        # shed from the top like water: a paid move takes s no lower than the next
        # busiest broker (less a step), so the budget lowers the busiest brokers evenly
        rest = util.copy()
        rest[s] = -np.inf
        level = max(stop, float(rest.max()) - STEP * ideal)
        need = (top - level) * norm[s]
        ok = (w > 0) & (cost <= budget[0])
        paid = cost > 0
        if np.count_nonzero(ok & paid & (w <= need)):
            ok &= ~paid | (w <= need)
        sel = np.flatnonzero(ok)[:MAX_TRIES]
        cand = (ps[sel], ks[sel], w[sel])
        if _move(model, j, s, top, util, cand, budget) or _swap(
            model, j, s, top, util, cand, cells, budget
        ):
            moved += 1
        else:
            break
    return moved


def _move(
    model: ClusterModel,
    j: int,
    s: int,
    top: float,
    util: np.ndarray,
    cand: tuple[np.ndarray, np.ndarray, np.ndarray],
    budget: list[float],
) -> bool:
    norm = model.norm[:, j]
    for p, k, wi in _screened(model, cand):
        mask = model.move_dest_mask(p, k)
        if mask is None:
            continue
        after = util + wi / norm
        mask &= after < top * (1 - EPS)
        if not np.count_nonzero(mask):
            continue
        d = int(np.argmin(np.where(mask, after, np.inf)))
        added = _added(model, p, s, d)
        if added > budget[0]:
            continue
        model.move_replica(p, k, d, GOAL_OF[j])
        budget[0] -= added
        return True
    return False


def _screened(
    model: ClusterModel, cand: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> Iterator[tuple[int, int, float]]:
    """The candidates as (partition, slot, weight): the first few as they are (most
    often the first moves), then those whose broker may give them. A long run it may
    not give is common (a band's lower edge on some measure), and nothing moves
    between these candidates, so it is told apart at once."""
    ps, ks, w = cand
    first = min(MOVE_ONE_BY_ONE, ps.shape[0])
    yield from zip(ps[:first].tolist(), ks[:first].tolist(), w[:first].tolist(), strict=True)
    if first == ps.shape[0]:
        return
    ps, ks, w = ps[first:], ks[first:], w[first:]
    gives = ~model.source_refuses(ps, ks)
    yield from zip(ps[gives].tolist(), ks[gives].tolist(), w[gives].tolist(), strict=True)


def _swap(
    model: ClusterModel,
    j: int,
    s: int,
    top: float,
    util: np.ndarray,
    cand: tuple[np.ndarray, np.ndarray, np.ndarray],
    cells: _Cells,
    budget: list[float],
) -> bool:
    """Trade a replica of s for a lighter one of one of the least busy brokers,
    the fewest bytes the partner's replica adds first."""
    norm, load = model.norm[:, j], model.load
    partners = np.flatnonzero(model.usable & (util < top))
    partners = partners[np.argsort(util[partners], kind="stable")][:SWAP_PARTNERS]
    goal = GOAL_OF[j]
    pa, ka, wa = (c[:SWAP_HEAVY] for c in cand)
    va = model.fvec[pa] + np.where((ka == 0)[:, None], model.lvec[pa], 0.0)
    for d in partners.tolist():
        pb, kb, wb, cb = cells.on(d)
        if pb.shape[0] == 0:
            continue
        light = np.lexsort((pb, wb, cb))[:SWAP_LIGHT]
        pb, kb, wb = pb[light], kb[light], wb[light]
        vb = model.fvec[pb] + np.where((kb == 0)[:, None], model.lvec[pb], 0.0)
        # the load checks of swap_ok for every pair at once; swap_ok has the final say
        net = va[:, None, :] - vb[None, :, :]
        ok = (net[:, :, j] > 0) & (net[:, :, j] < (top * (1 - EPS) - util[d]) * norm[d])
        for b, sign in ((d, 1.0), (s, -1.0)):
            new = load[b] + sign * net
            ok &= (new <= np.maximum(model.hi[b], load[b])).all(axis=2)
            ok &= (new >= np.minimum(model.lo[b], load[b])).all(axis=2)
        for ia, ib in zip(*np.nonzero(ok), strict=True):
            p1, k1, p2, k2 = int(pa[ia]), int(ka[ia]), int(pb[ib]), int(kb[ib])
            if not model.swap_ok(p1, k1, p2, k2):
                continue
            added = _added(model, p1, s, d) + _added(model, p2, d, s)
            if added > budget[0]:
                continue
            model.move_replica(p1, k1, d, goal)
            model.move_replica(p2, k2, s, goal)
            model.counter(goal).swaps += 1
            budget[0] -= added
            return True
    return False
