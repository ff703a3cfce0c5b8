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

import numpy as np

from ..model import ClusterModel
from .band_hooks import BandHooks
from .leader_chains import TOL, _fits, _fits_rows
from .tolerance import tolerance

LEVEL_STEPS = 256  # steps per call at most: each is one or two leadership changes


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
    rows = model.assign[ps]
    kk = np.arange(rows.shape[1])[None, :]
    ok = (kk >= 1) & (kk < model.rf[ps][:, None]) & (rows >= 0)
    pi, ki = np.nonzero(ok)
    bs = rows[pi, ki]
    keep = model.usable[bs] & model.leader_dest[bs]
    return ps[pi[keep]], ki[keep], bs[keep]


def _best_step(model: ClusterModel, j: int, a: int, lo: np.ndarray) -> list[tuple[int, int]] | None:
    """The best step lowering broker a (see the module docstring) as leadership
    changes [(partition, slot of the new leader), ...], or None."""
    x = model.load[:, j]
    norm = model.norm[:, j]
    lvec = model.lvec
    start = x[a] / norm[a]
    below = start - abs(start) * TOL - TOL  # every touched broker ends under this
    # never under the band's lower edge a broker was above
    floor = np.minimum(lo, x) - tolerance(np.minimum(lo, x))

    p1s = _led(model, a)
    p1s = p1s[lvec[p1s, j] > 0]
    p1s = p1s[_fits(model, a, -lvec[p1s])]
    q1, k1, b1 = _followers(model, p1s)
    if q1.shape[0] == 0:
        return None
    listed = (model.assign != model.initial).any(axis=1)
    # candidates as (utilisation left on the touched brokers, partitions newly
    # listed, the changes); the lowest wins
    cands: list[tuple[tuple, list[tuple[int, int]]]] = []

    # single changes a -> b
    w1 = lvec[q1, j]
    score = np.maximum((x[a] - w1) / norm[a], (x[b1] + w1) / norm[b1])
    ok = (score < below) & (x[a] - w1 >= floor[a]) & _fits_rows(model, b1, lvec[q1])
    sel = np.flatnonzero(ok)
    if sel.shape[0]:
        fresh = (~listed[q1[sel]]).astype(np.int64)
        i = int(sel[np.lexsort((sel, fresh, score[sel]))[0]])
        cands.append(((float(score[i]), int(not listed[q1[i]])), [(int(q1[i]), int(k1[i]))]))

    # chains a -> b -> c and trades a -> b -> a, one middle broker b at a time
    for b in np.unique(b1).tolist():
        m1 = b1 == b
        qa, ka = q1[m1], k1[m1]
        p2s = _led(model, b)
        q2, k2, c2 = _followers(model, p2s[lvec[p2s, j] > 0])
        keep = c2 != b
        q2, k2, c2 = q2[keep], k2[keep], c2[keep]
        if q2.shape[0] == 0:
            continue
        wa = lvec[qa, j][:, None]
        wb = lvec[q2, j][None, :]
        trade = (c2 == a)[None, :]
        xa = x[a] - wa + np.where(trade, wb, 0.0)
        xb = x[b] + wa - wb
        nc = np.where(trade, -np.inf, (x[c2][None, :] + wb) / norm[c2][None, :])
        score2 = np.maximum(np.maximum(xa / norm[a], xb / norm[b]), nc)
        ok2 = (score2 < below) & (xa >= floor[a]) & (xb >= floor[b])
        i1, i2 = np.nonzero(ok2)
        if i1.shape[0] == 0:
            continue
        # every registered constraint, on each broker the step touches
        va, vb = lvec[qa[i1]], lvec[q2[i2]]
        tr = c2[i2] == a
        fit = _fits(model, a, -va + np.where(tr[:, None], vb, 0.0))
        fit &= _fits(model, b, va - vb)
        fit &= tr | _fits_rows(model, c2[i2], vb)
        i1, i2 = i1[fit], i2[fit]
        if i1.shape[0] == 0:
            continue
        sc = score2[i1, i2]
        fresh = (~listed[qa[i1]]).astype(np.int64) + (~listed[q2[i2]]).astype(np.int64)
        i = int(np.lexsort((np.arange(sc.shape[0]), fresh, sc))[0])
        cands.append(
            (
                (float(sc[i]), int(fresh[i])),
                [(int(qa[i1[i]]), int(ka[i1[i]])), (int(q2[i2[i]]), int(k2[i2[i]]))],
            )
        )
    if not cands:
        return None
    return min(cands, key=lambda c: c[0])[1]
