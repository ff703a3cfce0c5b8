"""Two leadership changes in a row, for a leader count a single change can't level.

A broker above the leader-count band often can't hand a leadership straight to one
below it: either they share no partition, or every partition they share would push
the taker past a band an earlier goal registered (network out, typically, when a
few partitions carry most of it). A chain A -> B -> C moves the leadership of p1
from A to B and of p2 from B to C: B keeps its count, A loses one, C gains one, and
B's network out changes only by the difference of the two partitions' leader loads,
so a light partition can carry the count past a broker with no room. No data is
copied. All pairs (p1, p2) through every middle broker are weighed in one numpy pass
against every registered constraint ("never worse", as `leader_move_ok` judges a
single change); among those that fit, the pair whose partitions the plan lists
anyway goes first, then the one moving the least network out.
"""

from __future__ import annotations

import numpy as np

from ..measures import NW_OUT
from ..model import ClusterModel

TOL = 1e-9


def _led(model: ClusterModel, a: int) -> np.ndarray:
    ps = model.led_by(a)
    return ps[~model.frozen[ps] & model.leader_movable[ps]]


def _fits(model: ClusterModel, b: int, delta: np.ndarray) -> np.ndarray:
    """Per row of `delta` (..., measures): may broker b's loads change by it?"""
    cur = model.load[b]
    new = cur + delta
    top = np.maximum(model.hi[b], cur) + np.abs(cur) * TOL + TOL
    bottom = np.minimum(model.lo[b], cur) - np.abs(cur) * TOL - TOL
    return ((new <= top) & (new >= bottom)).all(axis=-1)


def _fits_rows(model: ClusterModel, bs: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Per row, may broker bs[i]'s loads change by delta[i]? (`_fits` per row)"""
    cur = model.load[bs]
    new = cur + delta
    top = np.maximum(model.hi[bs], cur) + np.abs(cur) * TOL + TOL
    bottom = np.minimum(model.lo[bs], cur) - np.abs(cur) * TOL - TOL
    return ((new <= top) & (new >= bottom)).all(axis=-1)


def _by_follower(ps: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every follower cell of `ps` as (partition, slot, broker), brokers ascending,
    partitions in the order of `ps` within a broker: one pass for every middle
    broker of a chain."""
    followers = rows[:, 1:]
    i, k = np.nonzero(followers >= 0)
    b = followers[i, k]
    order = np.argsort(b, kind="stable")
    return ps[i[order]], k[order] + 1, b[order]


def _passes_to(
    model: ClusterModel, c: int, index: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every leadership broker c may take, c kept within its constraints: (partition,
    c's slot in it, its leader), leaders ascending, partitions ascending within a
    leader (the order of `led`). `index` lists the partitions each broker holds;
    leadership changes keep it true, as they only reorder replica lists."""
    ps, _ = model.cells_of(index, c)
    ps = np.sort(ps)
    rows = model.assign[ps]
    leaders = rows[:, 0]
    keep = (leaders != c) & ~model.frozen[ps] & model.leader_movable[ps]
    ps, rows, leaders = ps[keep], rows[keep], leaders[keep]
    ks = np.argmax(rows == c, axis=1)
    ok = _fits(model, c, model.lvec[ps])
    ps, ks, leaders = ps[ok], ks[ok], leaders[ok]
    order = np.argsort(leaders, kind="stable")
    return ps[order], ks[order], leaders[order]


def _fresh(model: ClusterModel, ps: np.ndarray) -> np.ndarray:
    """1 for each partition of `ps` the plan doesn't list (its replica list as at the
    start), else 0: only these rows, as the whole table is large."""
    return (model.assign[ps] == model.initial[ps]).all(axis=1).astype(np.int64)


def leader_chain(
    model: ClusterModel,
    a: int,
    c: int,
    memo: dict | None = None,
    index: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[int, int, int, int] | None:
    """Leadership of p1 from broker a to a middle broker, and of p2 from there to c,
    every registered constraint kept: (p1, k1, p2, k2) with k the slot of the new
    leader in each replica list, or None.

    `memo` keeps what one model state gives per broker (leaderships it may give or
    take), for a caller trying many pairs (a, c) before the next change; the caller
    drops it at every change. `index` is `model.replicas_by_broker()` of this or an
    earlier state with the same replica sets (built when not given).

    Every middle broker is weighed at once: each pair (p1, p2) through the same
    middle broker b is a row; among the rows every constraint accepts, the fewest
    partitions newly listed, then the least network out moved, then the lowest b,
    then the first p1 and p2 in the order of `led`."""
    if not (model.leader_dest[c] and model.usable[c]):
        return None
    if memo is None:
        memo = {}
    lvec = model.lvec
    if ("a", a) not in memo:
        p1s = _led(model, a)
        p1s = p1s[_fits(model, a, -lvec[p1s])]
        memo["a", a] = _by_follower(p1s, model.assign[p1s])
    q1, k1, b1 = memo["a", a]
    if q1.shape[0] == 0:
        return None
    if ("c", c) not in memo:
        if index is None:
            index = memo.get("index")
            if index is None:
                index = memo["index"] = model.replicas_by_broker()
        memo["c", c] = _passes_to(model, c, index)
    q2, k2, b2 = memo["c", c]
    if q2.shape[0] == 0:
        return None
    # pairs (i1, i2) with the same middle broker: b1 and b2 are both sorted
    mids = (b1 != c) & model.leader_dest[b1] & model.usable[b1]
    start = np.searchsorted(b2, b1, side="left")
    n = np.where(mids, np.searchsorted(b2, b1, side="right") - start, 0)
    total = int(n.sum())
    if total == 0:
        return None
    i1 = np.repeat(np.arange(q1.shape[0]), n)
    first = np.cumsum(n) - n
    i2 = start[i1] + (np.arange(total) - first[i1])
    b = b1[i1]
    fit = _fits_rows(model, b, lvec[q1[i1]] - lvec[q2[i2]])
    i1, i2, b = i1[fit], i2[fit], b[fit]
    if i1.shape[0] == 0:
        return None
    # partitions the plan doesn't list yet, of the givable and takeable leaderships
    if ("fresh a", a) not in memo:
        memo["fresh a", a] = _fresh(model, q1)
    if ("fresh c", c) not in memo:
        memo["fresh c", c] = _fresh(model, q2)
    untouched = memo["fresh a", a][i1] + memo["fresh c", c][i2]
    moved = lvec[q1[i1], NW_OUT] + lvec[q2[i2], NW_OUT]
    i = int(np.lexsort((i2, i1, b, moved, untouched))[0])
    return int(q1[i1[i]]), int(k1[i1[i]]), int(q2[i2[i]]), int(k2[i2[i]])


def leader_single(model: ClusterModel, a: int, c: int) -> tuple[int, int] | None:
    """One leadership change from broker a to broker c every registered constraint
    accepts: (p, k), the lightest in network out, or None."""
    if not (model.leader_dest[c] and model.usable[c]):
        return None
    ps = _led(model, a)
    has_c = model.assign[ps] == c
    sel = has_c.any(axis=1)
    ps, ks = ps[sel], np.argmax(has_c[sel], axis=1)
    if ps.shape[0] == 0:
        return None
    vec = model.lvec[ps]
    ok = _fits(model, a, -vec) & _fits(model, c, vec)
    ps, ks = ps[ok], ks[ok]
    if ps.shape[0] == 0:
        return None
    i = int(np.lexsort((ps, model.lvec[ps, NW_OUT]))[0])
    return int(ps[i]), int(ks[i])


def room_swaps(
    model: ClusterModel, a: int, *, more: bool = True
) -> list[tuple[int, int, int, int]]:
    """Leadership trades that leave every count as it is but give broker a more
    network out (a takes a heavier partition from d, d a lighter one from a), so
    that a may then hand a leadership on without falling under a band's lower edge,
    or with `more=False` less, so that a may then take one without going over a
    band: (p from a, its slot of d, q from d, its slot of a), most network out
    shifted first, a few per partner."""
    out: list[tuple[float, int, int, int, int, int]] = []
    ps = _led(model, a)
    lvec = model.lvec
    for d in np.flatnonzero(model.usable & model.leader_dest).tolist():
        if d == a:
            continue
        has_d = model.assign[ps] == d
        sel = has_d.any(axis=1)
        p1, k1 = ps[sel], np.argmax(has_d[sel], axis=1)
        qs = _led(model, d)
        has_a = model.assign[qs] == a
        sel2 = has_a.any(axis=1)
        q2, k2 = qs[sel2], np.argmax(has_a[sel2], axis=1)
        if p1.shape[0] == 0 or q2.shape[0] == 0:
            continue
        net = lvec[q2][None, :, :] - lvec[p1][:, None, :]  # what a gains, d loses
        shift = net[:, :, NW_OUT] if more else -net[:, :, NW_OUT]
        ok = _fits(model, a, net) & _fits(model, d, -net) & (shift > 0)
        i1, i2 = np.nonzero(ok)
        gain = shift[i1, i2]
        for i in np.lexsort((i2, i1, -gain))[:4].tolist():
            out.append(
                (-float(gain[i]), d, int(p1[i1[i]]), int(k1[i1[i]]), int(q2[i2[i]]), int(k2[i2[i]]))
            )
    out.sort()
    return [(p, k, q, kq) for _, _, p, k, q, kq in out]
