"""The band optimiser's leadership step: leadership changes, which copy no data.

Brokers above the band hand leaderships to followers with room; brokers below it
take leaderships of replicas they follow, one change at a time. Leader counts a
single change can't level go through a middle broker (leader_chains.py).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..measures import LEADER_MEASURES
from ..model import ClusterModel
from .band_hooks import BandHooks
from .leader_chain_screen import ChainScreen
from .leader_chains import leader_chain, leader_single, room_swaps
from .limits import MAX_FAILS
from .tolerance import tolerance

CHAINS = 64  # two-step leadership changes (leader_chains.py) per round at most
ROOM_SWAPS = 8  # leadership trades tried per broker to make room for a give
SCREEN_PAIRS = 256  # pairs screened at once: the first often has a chain
FIRST_BUDGET = 0.05  # seconds of plain search before the first screen (a build's cost
# at a few hundred brokers)
ROOM_BROKERS = 4  # brokers above the band, and takers each, tried for such trades


def leadership_moves(
    goal: BandHooks, model: ClusterModel, *, lo: np.ndarray, hi: np.ndarray
) -> int:
    """Move leadership off brokers above the band, then onto brokers below it."""
    index = model.replicas_by_broker()
    moved = _give_leadership(goal, model, index, lo=lo, hi=hi)
    return moved + _take_leadership(goal, model, index, lo=lo, hi=hi)


def _give_leadership(
    goal: BandHooks,
    model: ClusterModel,
    index: tuple[np.ndarray, np.ndarray],
    *,
    lo: np.ndarray,
    hi: np.ndarray,
) -> int:
    """Each broker above the band hands leaderships to followers with room."""
    j = goal.measure
    load = model.load
    norm = model.norm[:, j]
    assign = model.assign
    moved = 0
    x = load[:, j]
    over = np.flatnonzero(model.usable & (x > hi + tolerance(hi)))
    over = over[np.argsort(-(x[over] / norm[over]), kind="stable")]
    hi_l, norm_l = hi.tolist(), norm.tolist()  # read per follower: plain floats
    dest_l = model.leader_dest.tolist()
    level = goal.leadership_only
    for s in over.tolist():
        ps, ks = model.cells_of(index, s)
        sel = (ks == 0) & ~model.frozen[ps] & model.leader_movable[ps]
        ps = ps[sel]
        w = model.lvec[ps, j]
        keep = w > 0
        ps, w = ps[keep], w[keep]
        fails = 0
        done = float(hi[s] + tolerance(hi[s]))  # the bands stay as they are meanwhile
        bottom = float(lo[s])
        ps_l, w_l = ps.tolist(), w.tolist()
        # what each leadership carries, on the measures a leadership moves (`lvec`
        # is 0 on the others)
        lv_l = model.lvec.take(ps, axis=0)[:, LEADER_MEASURES].tolist()
        xs = float(x[s])  # only s's own moves change it: read again after each
        for i in goal.leader_order(model, ps, w).tolist():
            if xs <= done or fails > MAX_FAILS:
                break
            p = ps_l[i]
            wi = w_l[i]
            if assign[p, 0] != s or xs - wi < bottom:
                fails += 1
                continue
            best_k = _best_new_leader(
                model, p, s, wi, lv_l[i], x=x, level=level, hi=hi_l, norm=norm_l, dest=dest_l
            )
            if best_k < 0:
                fails += 1
                continue
            fails = 0
            model.move_leader(p, best_k, goal.name)
            xs = float(x[s])
            moved += 1
    return moved


def _best_new_leader(
    model: ClusterModel,
    p: int,
    s: int,
    wi: float,
    vec: list[float],
    *,
    x: np.ndarray,
    level: bool,
    hi: list[float],
    norm: list[float],
    dest: list[bool],
) -> int:
    """The follower slot k of p (the first among equals) whose broker ends least
    utilised when it takes the leadership (weight wi; `vec`, its load on the
    LEADER_MEASURES) from s, p's leader, within its band and as
    `model.leader_move_ok` allows, or -1. With `level`, where the band is
    out of reach, still level: the broker may end past the band while it ends no
    higher than s (the spread strictly narrows, so no leadership goes back and forth)."""
    row = model.assign[p].tolist()
    best_k, best = -1, math.inf
    if level:
        keep = (float(x[s]) - wi) / norm[s]
    checked = False
    for k in range(1, model.rf_l[p]):
        b = row[k]
        after = float(x[b]) + wi
        cap = hi[b]
        if level:
            top = keep * norm[b]
            cap = max(cap, top + (abs(top) * 1e-9 + 1e-9))  # `tolerance`
        if after > cap or not dest[b]:
            continue
        if not checked:
            # `leader_move_ok` without its checks of p and s, alike for every slot
            # (p is leader-movable here, and s leads it): vec > slack[s]
            if _exceeds(vec, model.load[s].tolist(), model.lo[s].tolist()):
                return -1
            checked = True
        # vec > room[b], read from hi and the load as `_exceeds` does
        if _exceeds(vec, model.hi[b].tolist(), model.load[b].tolist()):
            continue
        score = after / norm[b]
        if score < best:
            best_k, best = k, score
    return best_k


def _exceeds(vec: list[float], upper: list[float], lower: list[float]) -> bool:
    """Whether any of `vec` (on the LEADER_MEASURES) exceeds max(upper - lower, 0)
    on its measure: the test `np.count_nonzero(vec > model.room[b])` makes with
    upper, lower = hi[b], load[b] (or `slack[s]` with load[s], lo[s]), on plain
    floats, so no row of room or slack need be settled."""
    for v, j in zip(vec, LEADER_MEASURES, strict=True):
        if v > 0.0 and v > upper[j] - lower[j]:
            return True
    return False


def _take_leadership(
    goal: BandHooks,
    model: ClusterModel,
    index: tuple[np.ndarray, np.ndarray],
    *,
    lo: np.ndarray,
    hi: np.ndarray,
) -> int:
    """Each broker below the band takes leaderships of replicas it follows."""
    j = goal.measure
    load = model.load
    norm = model.norm[:, j]
    assign = model.assign
    moved = 0
    x = load[:, j]
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
        for i in goal.leader_order(model, ps, w).tolist():
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
            model.move_leader(p, k, goal.name)
            moved += 1
    return moved


def leader_chain_moves(
    goal: BandHooks, model: ClusterModel, *, lo: np.ndarray, hi: np.ndarray
) -> int:
    """Leader counts a single change can't level: two changes in a row through a
    middle broker whose count stays (leader_chains.py), from a broker above the
    band or to one below it, the most / least loaded partners first."""
    x = model.load[:, goal.measure]
    # the partitions each broker holds: leadership changes keep it true
    index = model.replicas_by_broker()
    moved = 0
    screening = _Screening()
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
        found = _first_chain(model, pairs, index, screening)
        if found is None:
            if not _room_then_give(goal, model, over, x, hi, index):
                break
            moved += 1
            continue
        p1, k1, p2, k2 = found
        model.move_leader(p1, k1, goal.name)
        model.move_leader(p2, k2, goal.name)
        moved += 1
    return moved


@dataclass
class _Screening:
    """The chain screen of one `leader_chain_moves` call (built at first need, then
    refreshed where moves touched) and what bringing it up to date cost last."""

    screen: ChainScreen | None = None
    cost: float = FIRST_BUDGET  # seconds


def _first_chain(
    model: ClusterModel,
    pairs: list[tuple[int, int]],
    index: tuple[np.ndarray, np.ndarray],
    screening: _Screening,
) -> tuple[int, int, int, int] | None:
    """The chain of the first pair (a, c) that has one, or None. Pairs are searched
    as they come until that has taken as long as the last update of the screen
    (leader_chain_screen.py); then the screen is brought to the model's state and
    only the rest it lets through are searched. Where chains come among the first
    pairs the screen costs more than the searches it saves, and where they come
    late it saves far more: this way neither costs more than twice the better.
    The screen refuses only pairs without a chain, so the chain found is the same
    either way and time decides nothing but the cost."""
    memo: dict = {}  # the model doesn't change until a chain is found
    started = time.perf_counter()
    searched = 0
    for a, c in pairs:
        found = leader_chain(model, a, c, memo, index)
        searched += 1
        if found is not None:
            return found
        if time.perf_counter() - started > screening.cost:
            break
    if searched == len(pairs):
        return None
    started = time.perf_counter()
    if screening.screen is None:
        screening.screen = ChainScreen(model)
    else:
        screening.screen.refresh(model)
    screening.cost = time.perf_counter() - started
    screen = screening.screen
    both = np.array(pairs[searched:], dtype=np.int64)
    for s in range(0, both.shape[0], SCREEN_PAIRS):
        part = both[s : s + SCREEN_PAIRS]
        keep = np.flatnonzero(screen.possible(part[:, 0], part[:, 1]))
        for a, c in part[keep].tolist():
            found = leader_chain(model, a, c, memo, index)
            if found is not None:
                return found
    return None


def _room_then_give(
    goal: BandHooks,
    model: ClusterModel,
    over: np.ndarray,
    x: np.ndarray,
    hi: np.ndarray,
    index: tuple[np.ndarray, np.ndarray],
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
        trades = [(t, None) for t in room_swaps(model, a, index=index)[:ROOM_SWAPS]]
        for c in takers:
            if c not in taker_trades:  # takers recur across brokers; trades roll back
                taker_trades[c] = room_swaps(model, c, more=False, index=index)[:ROOM_SWAPS]
            trades += [(t, c) for t in taker_trades[c]]
        for (p, k, q, kq), only in trades:
            model.begin()
            model.move_leader(p, k, goal.name)
            model.move_leader(q, kq, goal.name)
            memo: dict = {}
            for c in takers if only is None else [only]:
                single = leader_single(model, a, c)
                if single is not None:
                    model.move_leader(*single, goal.name)
                    model.commit()
                    return True
                chain = leader_chain(model, a, c, memo, index)
                if chain is not None:
                    model.move_leader(chain[0], chain[1], goal.name)
                    model.move_leader(chain[2], chain[3], goal.name)
                    model.commit()
                    return True
            model.rollback()
    return False
