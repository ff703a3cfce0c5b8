"""Leadership-only levelling of a resource leadership carries (network out, leaders'
bytes in), where no single change the band optimiser tries gets a broker back in band.

In the final leadership pass a few heavy partitions often decide the busiest broker:
handing one of them to a follower would leave the follower busier than the giver
was, so `band_leaders` stops. This step weighs, for each broker above the band
(busiest first), every way of lowering it by reordering alone:

- a single change: the leadership of p1 from broker a to its follower b;
- a chain: p1 from a to b, and p2, which b leads, from b to its follower c, so b
  passes load on;
- a trade: p1 from a to b and p2 from b back to a, so only the difference moves.

A step is taken only when every broker it touches ends strictly below the
utilisation a started at, no broker ends under the band's lower edge it was above,
and every registered constraint holds ("never worse", as `leader_move_ok` judges a
single change). The sorted utilisations then fall at every step, so no leadership
goes back and forth and the search ends. Among the steps that fit, the one leaving
the lowest utilisation on the brokers it touches wins, then the one adding fewest
partitions to the plan. No data is copied.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..model import ClusterModel
from .band_hooks import BandHooks
from .leader_chains import TOL, _fits, _fits_rows, _fresh
from .tolerance import tolerance

LEVEL_STEPS = 256  # steps per call at most: each is one or two leadership changes
FIRST_TRIES = 8  # steps tested against the constraints at once, the best-ranked first


def leader_level_moves(
    goal: BandHooks, model: ClusterModel, *, lo: np.ndarray, hi: np.ndarray
) -> int:
    """Lower brokers above the band by single changes, chains and trades of
    leadership; the number of steps taken."""
    j = goal.measure
    x = model.load[:, j]
    norm = model.norm[:, j]
    steps = 0
    while steps < LEVEL_STEPS:
        over = np.flatnonzero(model.usable & (x > hi + tolerance(hi)))
        if over.shape[0] == 0:
            break
        u = x[over] / norm[over]
        over = over[np.lexsort((over, -u))]
        found = None
        for a in over.tolist():
            found = _best_step(model, j, a, lo)
            if found is not None:
                break
        if found is None:
            break
        for p, k in found:
            model.move_leader(p, k, goal.name)
        steps += 1
    return steps


def _led(model: ClusterModel, b: int) -> np.ndarray:
    ps = model.led_by(b)
    return ps[~model.frozen[ps] & model.leader_movable[ps]]


def _followers(model: ClusterModel, ps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (partition, slot, broker) of a follower of `ps` that may lead."""
    rows = model.assign.take(ps, axis=0)
    kk = np.arange(rows.shape[1])[None, :]
    ok = (kk >= 1) & (kk < model.rf[ps][:, None]) & (rows >= 0)
    pi, ki = np.nonzero(ok)
    bs = rows[pi, ki]
    keep = model.usable[bs] & model.leader_dest[bs]
    return ps[pi[keep]], ki[keep], bs[keep]


class _Gives(NamedTuple):
    """Each leadership broker a may give: partition, slot and broker of the follower
    taking it, and a's utilisation after the change, per row."""

    q: np.ndarray
    k: np.ndarray
    b: np.ndarray
    left: np.ndarray


class _Step(NamedTuple):
    """A step and its rank: (utilisation left on the touched brokers, partitions
    newly listed, -1 for a single change or else the middle broker)."""

    key: tuple[float, int, int]
    changes: list[tuple[int, int]]


def _best_step(model: ClusterModel, j: int, a: int, lo: np.ndarray) -> list[tuple[int, int]] | None:
    """The best step lowering broker a (see the module docstring) as leadership
    changes [(partition, slot of the new leader), ...], or None.

    Steps rank by `_Step.key`, then in the order of `_followers`. No step through a
    middle broker b leaves a lower than a's heaviest give to b does, so the middle
    brokers are weighed from the lowest such bound up, only while it doesn't pass
    the best step found, and only on the pairs that could match that step."""
    x = model.load[:, j]
    norm = model.norm[:, j]
    lvec = model.lvec
    start = x[a] / norm[a]
    below = start - abs(start) * TOL - TOL  # every touched broker ends under this
    # never under the band's lower edge a broker was above
    floor = np.minimum(lo, x) - tolerance(np.minimum(lo, x))
    p1s = _led(model, a)
    p1s = p1s[lvec[p1s, j] > 0]
    p1s = p1s[_fits(model, a, -lvec.take(p1s, axis=0))]
    q1, k1, b1 = _followers(model, p1s)
    if q1.shape[0] == 0:
        return None
    gives = _Gives(q1, k1, b1, (x[a] - lvec[q1, j]) / norm[a])
    best = _best_single(model, j, a, gives, below, floor)
    # the rows of each middle broker, in the order of `_followers`
    order = np.argsort(b1, kind="stable")
    mids, first = np.unique(b1[order], return_index=True)
    bound = np.minimum.reduceat(gives.left[order], first)
    ends = [*first[1:].tolist(), order.shape[0]]
    for i in np.lexsort((mids, bound)).tolist():
        if best is not None and bound[i] > best.key[0]:
            break
        rows = order[first[i] : ends[i]]
        found = _best_through(model, j, a, int(mids[i]), gives, rows, below, floor, best)
        if found is not None:
            best = found
    return None if best is None else best.changes


def _best_single(
    model: ClusterModel, j: int, a: int, gives: _Gives, below: float, floor: np.ndarray
) -> _Step | None:
    """The best single change a -> b."""
    x = model.load[:, j]
    norm = model.norm[:, j]
    q1, b1 = gives.q, gives.b
    w1 = model.lvec[q1, j]
    score = np.maximum(gives.left, (x[b1] + w1) / norm[b1])
    sel = np.flatnonzero((score < below) & (x[a] - w1 >= floor[a]))
    if sel.shape[0] == 0:
        return None
    fresh = _fresh(model, q1[sel])
    ranked = np.lexsort((sel, fresh, score[sel]))
    r = _first_fitting(ranked, lambda r: _fits_rows(model, b1[sel[r]], model.lvec[q1[sel[r]]]))
    if r < 0:
        return None
    i = int(sel[r])
    return _Step((float(score[i]), int(fresh[r]), -1), [(int(q1[i]), int(gives.k[i]))])


def _best_through(
    model: ClusterModel,
    j: int,
    a: int,
    b: int,
    gives: _Gives,
    rows: np.ndarray,
    below: float,
    floor: np.ndarray,
    best: _Step | None,
) -> _Step | None:
    """The best chain a -> b -> c or trade a -> b -> a of a give in `rows`, when it
    ranks before `best`."""
    x = model.load[:, j]
    norm = model.norm[:, j]
    lvec = model.lvec
    cut = np.inf if best is None else best.key[0]
    left = gives.left[rows]
    rows = rows[(left < below) & (left <= cut)]
    if rows.shape[0] == 0:
        return None
    qa, ka = gives.q[rows], gives.k[rows]
    wa = lvec[qa, j]
    p2s = _led(model, b)
    q2, k2, c2 = _followers(model, p2s[lvec[p2s, j] > 0])
    wb = lvec[q2, j]
    trade = c2 == a
    nc = np.where(trade, -np.inf, (x[c2] + wb) / norm[c2])
    # what a column's pairs share whatever the row: b ends no lower than with the
    # lightest give and no higher than with the heaviest
    low = (x[b] + wa.min() - wb) / norm[b]
    high = x[b] + wa.max() - wb
    keep = (c2 != b) & (nc < below) & (nc <= cut) & (low < below) & (low <= cut)
    keep &= high >= floor[b]
    q2, k2, c2, wb, trade, nc = q2[keep], k2[keep], c2[keep], wb[keep], trade[keep], nc[keep]
    if q2.shape[0] == 0:
        return None
    wa, wb = wa[:, None], wb[None, :]
    xa = x[a] - wa + np.where(trade[None, :], wb, 0.0)
    xb = x[b] + wa - wb
    score2 = np.maximum(np.maximum(xa / norm[a], xb / norm[b]), nc[None, :])
    ok2 = (score2 < below) & (score2 <= cut) & (xa >= floor[a]) & (xb >= floor[b])
    i1, i2 = np.nonzero(ok2)
    if i1.shape[0] == 0:
        return None
    sc = score2[i1, i2]
    fresh = _fresh(model, qa)[i1] + _fresh(model, q2)[i2]
    ranked = np.lexsort((np.arange(sc.shape[0]), fresh, sc))
    if best is not None:  # only the pairs ranking before it
        s, f, g = best.key
        r_sc, r_fresh = sc[ranked], fresh[ranked]
        ranked = ranked[(r_sc < s) | ((r_sc == s) & ((r_fresh < f) | ((r_fresh == f) & (b < g))))]

    def fits(r: np.ndarray) -> np.ndarray:
        # every registered constraint, on each broker the step touches
        va, vb, cs = lvec[qa[i1[r]]], lvec[q2[i2[r]]], c2[i2[r]]
        tr = cs == a
        ok = _fits(model, a, -va + np.where(tr[:, None], vb, 0.0))
        ok &= _fits(model, b, va - vb)
        return ok & (tr | _fits_rows(model, cs, vb))

    i = _first_fitting(ranked, fits)
    if i < 0:
        return None
    return _Step(
        (float(sc[i]), int(fresh[i]), b),
        [(int(qa[i1[i]]), int(ka[i1[i]])), (int(q2[i2[i]]), int(k2[i2[i]]))],
    )


def _first_fitting(ranked: np.ndarray, fits: Callable[[np.ndarray], np.ndarray]) -> int:
    """The first of `ranked` that `fits` accepts, or -1: the first few tested at
    once, then four times as many, and so on."""
    n, start = FIRST_TRIES, 0
    while start < ranked.shape[0]:
        chunk = ranked[start : start + n]
        hit = np.flatnonzero(fits(chunk))
        if hit.shape[0]:
            return int(chunk[hit[0]])
        start, n = start + n, n * 4
    return -1
