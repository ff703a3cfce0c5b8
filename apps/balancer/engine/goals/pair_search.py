"""Swaps judged on every measure at once, for a band goal the greedy swap left out of band.

`BandGoal._swaps` pairs a heavy replica with a partner of the right weight in the
goal's own measure, a few partners each. On a small cluster whose other bands are
tight that misses the one trade that helps: e.g. a broker over the network-in band
and at the bottom of the disk band needs a replica heavy in network in and light on
disk to leave, and one light in network in and heavy on disk to come back. Here
every pair of replicas of two brokers is weighed in one numpy pass (the candidates
capped per side, so a big cluster stays cheap): the load each measure would have on
both brokers, against every registered constraint ("never worse", as `swap_ok`
judges it), and the goal's own violation on the two brokers. The pair that lowers
that violation most, then copies the fewest bytes, is tried first; `swap_ok` has the
last word (racks, membership, per-topic counts).
"""

from __future__ import annotations

import numpy as np

from ..model import ClusterModel

# replicas per side weighed (160 x 160 pairs): a 5-broker bench broker holds fewer, so
# every one is weighed there; 400 a side cost the 12-broker overload bench ~10 s of CPU
# at 85 % load (for 12 disk swaps; with 160 its plans are those from before the search)
MAX_SIDE = 160
MAX_TRIES = 64  # ranked pairs `swap_ok` is asked about per broker pair
TOL = 1e-9


def _cells(model: ClusterModel, b: int, to: int):
    ps, ks = np.nonzero(model.assign == b)
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
    # measures with an edge on either broker (an infinite one accepts every load)
    ms = np.flatnonzero(
        np.isfinite(model.hi[d])
        | np.isfinite(model.lo[d])
        | np.isfinite(model.hi[s])
        | np.isfinite(model.lo[s])
    )
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
