"""The band optimiser's swap step: a replica of a broker out of band traded for one of a partner.

`swap_moves` pairs a heavy replica with a partner of the right weight in the goal's
own measure, a few partners each; `pair_swap_moves`, the last resort once nothing
cheaper moves, weighs swaps on every measure at once (pair_search.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..model import ClusterModel
from .band_hooks import BandHooks
from .limits import MAX_IDLE_SOURCES
from .pair_search import best_swap, best_trade
from .tolerance import tolerance

SWAP_SOURCES = 64  # heaviest candidates of a source tried in swaps
SWAP_DESTS = 12  # least utilised brokers tried as swap partners
SWAP_PARTNERS = 6  # partner replicas tried per candidate
SWAP_FAILS = 200  # rejected swaps after which a pair of brokers is given up
PAIR_SWAPS = 64  # swaps judged on every measure (pair_search.py) per round at most


def swap_moves(goal: BandHooks, model: ClusterModel, *, lo: np.ndarray, hi: np.ndarray) -> int:
    """Trade a heavy replica of a broker out of band for a light one of a partner."""
    j = goal.measure
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
            if not _needs(x, lo, hi, b):
                break
            moved += _swap_pair(goal, model, index, cache, s, d, lo, hi)
        idle = idle + 1 if moved == moved_before else 0
    return moved


def _swap_pair(
    goal: BandHooks,
    model: ClusterModel,
    index: tuple[np.ndarray, np.ndarray],
    cache: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]],
    s: int,
    d: int,
    lo: np.ndarray,
    hi: np.ndarray,
) -> int:
    x = model.load[:, goal.measure]
    assign = model.assign

    def cands(b: int, to: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if b not in cache:  # b's replicas as of this pass; moved ones drop out below
            ps, ks = model.cells_of(index, b)
            keep = model.movable[ps, ks] & ~model.frozen[ps]
            ps, ks = ps[keep], ks[keep]
            cache[b] = (ps, ks, goal.weights(model, ps, ks))
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
            model.move_replica(p1, k1, d, goal.name)
            model.move_replica(p2, k2, s, goal.name)
            model.counter(goal.name).swaps += 1
            moved += 1
            break
    return moved


def _needs(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, b: int) -> bool:
    return bool(x[b] > hi[b] + tolerance(hi[b]) or x[b] < lo[b] - tolerance(lo[b]))


def _around(mid: int, lo: int, hi: int) -> Iterator[int]:
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


def pair_swap_moves(goal: BandHooks, model: ClusterModel, *, lo: np.ndarray, hi: np.ndarray) -> int:
    """Swaps weighed on every measure at once (pair_search.py), worst broker first,
    each with the partners on the other side of it, least / most utilised first."""
    j = goal.measure
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
                model.move_replica(p, k, to, goal.name)
            model.counter(goal.name).swaps += 1
            moved += 1
            continue
        p1, k1, p2, k2 = found
        d, s = int(model.assign[p2, k2]), int(model.assign[p1, k1])
        failed = {pair for pair in failed if s not in pair and d not in pair}
        model.move_replica(p1, k1, d, goal.name)
        model.move_replica(p2, k2, s, goal.name)
        model.counter(goal.name).swaps += 1
        moved += 1
    return moved
