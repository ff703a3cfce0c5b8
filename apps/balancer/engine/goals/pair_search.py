"""Swaps judged on every measure at once, for a band goal the greedy swap left out of band.

`band_swaps.swap_moves` pairs a heavy replica with a partner of the right weight in the
goal's own measure, a few partners each. On a small cluster whose other bands are
tight that misses the one trade that helps: e.g. a broker over the network-in band
and at the bottom of the disk band needs a replica heavy in network in and light on
disk to leave, and one light in network in and heavy on disk to come back. Here
every pair of replicas of two brokers is weighed in one numpy pass (the candidates
capped per side, so a big cluster stays cheap): the load each measure would have on
both brokers, against every registered constraint ("never worse", as `swap_ok`
judges it), and the goal's own violation on the two brokers. The pair that lowers
that violation most, then copies the fewest bytes, is tried first; `swap_ok` has the
last word (racks, membership, per-topic counts). On a small cluster, when no pair
fits, `best_trade` weighs one follower against two the other way in the same pass.
"""

from __future__ import annotations

import numpy as np

from ..measures import REPLICAS
from ..model import ClusterModel

# replicas per side weighed (160 x 160 pairs): a small cluster's broker holds fewer, so
# every one is weighed there; a big cluster weighs its heaviest / lightest only, which
# keeps the CPU time of the search small
MAX_SIDE = 160
MAX_TRIES = 64  # ranked pairs `swap_ok` is asked about per broker pair
TOL = 1e-9


def _cells(model: ClusterModel, b: int, to: int):
    # the model's cached index: cells in (partition, slot) order, as a scan finds them
    ps, ks = model.cells_of(model.replicas_by_broker(), b)
    keep = model.movable[ps, ks] & ~model.frozen[ps]
    if not model.dest[to]:  # only replicas that came from `to` may go back there
        keep &= (model.initial[ps] == to).any(axis=1)
    ps, ks = ps[keep], ks[keep]
    vec = model.fvec[ps] + np.where((ks == 0)[:, None], model.lvec[ps], 0.0)
    cost = model.move_cost(ps, b)
    return ps, ks, vec, cost


def _violation(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return np.maximum(x - hi, 0.0) + np.maximum(lo - x, 0.0)


def best_swap(
    model: ClusterModel,
    s: int,
    d: int,
    j: int,
    lo: np.ndarray,
    hi: np.ndarray,
) -> tuple[int, int, int, int] | None:
    """The swap of a replica on s for one on d that most lowers measure j's band
    violation on the two brokers (fewest bytes copied among equals) and that every
    constraint accepts: (p1, k1, p2, k2), or None."""
    pa, ka, va, ca = _cells(model, s, d)
    pb, kb, vb, cb = _cells(model, d, s)
    if pa.shape[0] == 0 or pb.shape[0] == 0:
        return None
    # only a net flow of j from s to d can help when s is the heavier side
    if pa.shape[0] > MAX_SIDE:
        keep = np.argsort(-va[:, j], kind="stable")[:MAX_SIDE]
        pa, ka, va, ca = pa[keep], ka[keep], va[keep], ca[keep]
    if pb.shape[0] > MAX_SIDE:
        keep = np.argsort(vb[:, j], kind="stable")[:MAX_SIDE]
        pb, kb, vb, cb = pb[keep], kb[keep], vb[keep], cb[keep]
    load = model.load
    # the goal's own gain first, on measure j alone (na x nb): most pairs drop out here,
    # so the every-measure check below weighs only the survivors
    t = va[:, j][:, None] - vb[:, j][None, :]
    gain = (
        _violation(load[s, j], lo[s], hi[s])
        + _violation(load[d, j], lo[d], hi[d])
        - _violation(load[s, j] - t, lo[s], hi[s])
        - _violation(load[d, j] + t, lo[d], hi[d])
    )
    ia, ib = np.nonzero(gain > np.abs(load[s, j]) * TOL + TOL)
    if ia.shape[0] == 0:
        return None
    ms = _edge_measures(model, s, d)
    if ms.shape[0]:
        net = va[ia][:, ms] - vb[ib][:, ms]  # what flows from s to d, per pair and measure
        ok = np.ones(ia.shape[0], dtype=bool)
        for b, sign in ((d, 1.0), (s, -1.0)):
            cur = load[b, ms]
            top = np.maximum(model.hi[b, ms], cur) + np.abs(cur) * TOL + TOL
            bottom = np.minimum(model.lo[b, ms], cur) - np.abs(cur) * TOL - TOL
            new = cur + sign * net
            ok &= ((new <= top) & (new >= bottom)).all(axis=1)
        ia, ib = ia[ok], ib[ok]
        if ia.shape[0] == 0:
            return None
    g = gain[ia, ib]
    if g.shape[0] > MAX_TRIES:
        # only pairs at least as good as the MAX_TRIES-th best can be ranked first
        cut = np.partition(g, g.shape[0] - MAX_TRIES)[g.shape[0] - MAX_TRIES]
        keep = g >= cut
        ia, ib, g = ia[keep], ib[keep], g[keep]
    cost = ca[ia] + cb[ib]
    order = np.lexsort((ib, ia, cost, -g))[:MAX_TRIES]
    for i in order.tolist():
        p1, k1, p2, k2 = int(pa[ia[i]]), int(ka[ia[i]]), int(pb[ib[i]]), int(kb[ib[i]])
        if model.swap_ok(p1, k1, p2, k2):
            return p1, k1, p2, k2
    return None


# one-for-two trades: only where both brokers hold few replicas (a 5-broker cluster of
# 60 partitions holds ~36 a broker), so the n x n^2 / 2 triples stay cheap and a big
# cluster never pays for the search
TRADE_SIDE = 64


def _topic_ok(model: ClusterModel, b: int, ins: list[int], outs: list[int]) -> bool:
    if model.topic_hi is None or model.topic_lo is None:
        return True
    tc = model.topic_count
    delta: dict[int, int] = {}
    for p in ins:
        t = int(model.topic_l[p])
        delta[t] = delta.get(t, 0) + 1
    for p in outs:
        t = int(model.topic_l[p])
        delta[t] = delta.get(t, 0) - 1
    for t, dv in delta.items():
        cur = int(tc[t, b])
        if dv > 0 and cur + dv > max(model.topic_hi[t], cur):
            return False
        if dv < 0 and cur + dv < min(model.topic_lo[t], cur):
            return False
    return True


def _rack_ok(model: ClusterModel, p: int, k: int, to: int) -> bool:
    full, leaving = model.rack_full(p, k)
    return leaving or model.rack_l[to] not in full


def best_trade(
    model: ClusterModel,
    s: int,
    d: int,
    j: int,
    lo: np.ndarray,
    hi: np.ndarray,
) -> list[tuple[int, int, int]] | None:
    """When no one-for-one swap fits: s gives one replica to d and takes two back, or
    gives two and takes one, judged on the net loads of both brokers (a broker at the
    lower edge of one band and over another often needs exactly that). Followers
    only: leadership, and with it network out, stays where it is, so the leader
    goal finds the same room it had. The moves [(p, k, to), ...] of the trade that
    lowers measure j's violation most (fewest bytes copied among equals), or None."""
    if max(model.load[s, REPLICAS], model.load[d, REPLICAS]) > TRADE_SIDE:
        return None
    pa, ka, va, ca = _cells(model, s, d)
    pb, kb, vb, cb = _cells(model, d, s)
    fa, fb = ka > 0, kb > 0  # followers only: no network out, leadership left as it is
    pa, ka, va, ca = pa[fa], ka[fa], va[fa], ca[fa]
    pb, kb, vb, cb = pb[fb], kb[fb], vb[fb], cb[fb]
    if pa.shape[0] == 0 or pb.shape[0] == 0:
        return None
    okA = ~(model.assign[pa] == d).any(axis=1)  # d holds no replica of p yet
    okB = ~(model.assign[pb] == s).any(axis=1)
    ms = _edge_measures(model, s, d)
    side_a = (pa, ka, va, ca, okA)
    side_b = (pb, kb, vb, cb, okB)
    cands = _trade_candidates(model, s, j, lo, hi, ms, src=s, dst=d, one=side_a, two=side_b)
    cands += _trade_candidates(model, s, j, lo, hi, ms, src=d, dst=s, one=side_b, two=side_a)
    cands.sort(key=lambda c: (c[0], c[1], c[2]))
    return _first_accepted_trade(model, cands)


def _edge_measures(model: ClusterModel, s: int, d: int) -> np.ndarray:
    """Measures with an edge on either broker (an infinite one accepts every load)."""
    return np.flatnonzero(
        np.isfinite(model.hi[d])
        | np.isfinite(model.lo[d])
        | np.isfinite(model.hi[s])
        | np.isfinite(model.lo[s])
    )


def _trade_candidates(
    model: ClusterModel,
    s: int,
    j: int,
    lo: np.ndarray,
    hi: np.ndarray,
    ms: np.ndarray,
    *,
    src: int,
    dst: int,
    one: tuple[np.ndarray, ...],
    two: tuple[np.ndarray, ...],
) -> list[tuple[float, float, list[tuple[int, int, int]]]]:
    """Trades of one replica of src (`one`) for two of dst (`two`) that lower measure
    j's violation within every edge: (-gain, bytes copied, moves) each."""
    p1, k1, v1, c1, o1 = one
    p2, k2, v2, c2, o2 = two
    i2, i3 = np.triu_indices(p2.shape[0], 1)
    pair_ok = o2[i2] & o2[i3]
    i2, i3 = i2[pair_ok], i3[pair_ok]
    i1 = np.flatnonzero(o1)
    if i1.shape[0] == 0 or i2.shape[0] == 0:
        return []
    load = model.load
    # flow from the single's broker to the other, per (single, pair)
    flow = v1[i1][:, None, :] - v2[i2][None, :, :] - v2[i3][None, :, :]
    fj = flow[:, :, j]
    gain = (
        _violation(load[src, j], lo[src], hi[src])
        + _violation(load[dst, j], lo[dst], hi[dst])
        - _violation(load[src, j] - fj, lo[src], hi[src])
        - _violation(load[dst, j] + fj, lo[dst], hi[dst])
    )
    ok = gain > np.abs(load[s, j]) * TOL + TOL
    for b, sign in ((dst, 1.0), (src, -1.0)):
        cur = load[b, ms]
        top = np.maximum(model.hi[b, ms], cur) + np.abs(cur) * TOL + TOL
        bottom = np.minimum(model.lo[b, ms], cur) - np.abs(cur) * TOL - TOL
        new = cur + sign * flow[:, :, ms]
        ok &= ((new <= top) & (new >= bottom)).all(axis=-1)
    cands: list[tuple[float, float, list[tuple[int, int, int]]]] = []
    x1, x2 = np.nonzero(ok)
    for a, b in zip(x1.tolist(), x2.tolist(), strict=True):
        u, w1, w2 = int(i1[a]), int(i2[b]), int(i3[b])
        cost = float(c1[u] + c2[w1] + c2[w2])
        moves = [
            (int(p1[u]), int(k1[u]), dst),
            (int(p2[w1]), int(k2[w1]), src),
            (int(p2[w2]), int(k2[w2]), src),
        ]
        cands.append((-float(gain[a, b]), cost, moves))
    return cands


def _first_accepted_trade(
    model: ClusterModel, cands: list[tuple[float, float, list[tuple[int, int, int]]]]
) -> list[tuple[int, int, int]] | None:
    """The first of the ranked trades whose racks and per-topic counts allow it."""
    for _, _, moves in cands[:MAX_TRIES]:
        (p1, k1, to1), (p2, k2, to2), (p3, k3, to3) = moves
        if not (_rack_ok(model, p1, k1, to1) and _rack_ok(model, p2, k2, to2)):
            continue
        if not _rack_ok(model, p3, k3, to3):
            continue
        src = int(model.assign[p1, k1])
        if _topic_ok(model, to1, [p1], [p2, p3]) and _topic_ok(model, src, [p2, p3], [p1]):
            return moves
    return None
