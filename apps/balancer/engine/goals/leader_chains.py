"""Two leadership changes in a row, for a leader count a single change can't level.

A broker above the leader-count band often can't hand a leadership straight to one
below it: either they share no partition, or every partition they share would push
the taker past a band an earlier goal registered (network out, typically, when a
few partitions carry most of it). A chain A -> B -> C moves the leadership of p1
from A to B and of p2 from B to C: B keeps its count, A loses one, C gains one, and
B's network out changes only by the difference of the two partitions' leader loads,
so a light partition can carry the count past a broker with no room. No data is
copied. All pairs (p1, p2) through every middle broker are ranked in one numpy pass
and weighed against every registered constraint ("never worse", as `leader_move_ok`
judges a single change); among those that fit, the pair whose partitions the plan
lists anyway goes first, then the one moving the least network out.
"""

from __future__ import annotations

import numpy as np

from ..measures import LEADER_MEASURES, NW_OUT
from ..model import ClusterModel

TOL = 1e-9
FIRST_TRIES = 32  # rows of a chain's search tested at once, the likeliest first


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


def _fits_traded(
    model: ClusterModel,
    bs: np.ndarray,
    gained: tuple[np.ndarray, np.ndarray],
    lost: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:
    """Per row i, may broker bs[i] take the leadership of gained[0][gained[1][i]] and
    give that of lost[0][lost[1][i]]? `_fits_rows` of that change, on the measures a
    leadership carries (it leaves the others as they are), a measure at a time on
    the rows still in."""
    out = np.zeros(bs.shape[0], dtype=bool)
    rows = np.arange(bs.shape[0])
    (pg, ig), (pl, il) = gained, lost
    for j in LEADER_MEASURES:  # the others are 0 in `lvec`
        # each broker's bounds once, as `_fits` takes them, then per row
        cur = model.load[:, j]
        top = np.maximum(model.hi[:, j], cur) + np.abs(cur) * TOL + TOL
        bottom = np.minimum(model.lo[:, j], cur) - np.abs(cur) * TOL - TOL
        new = cur[bs] + (model.lvec[pg[ig], j] - model.lvec[pl[il], j])
        keep = np.flatnonzero((new <= top[bs]) & (new >= bottom[bs]))
        rows, bs, ig, il = rows[keep], bs[keep], ig[keep], il[keep]
    out[rows] = True
    return out


def _broker_order(model: ClusterModel, bs: np.ndarray) -> np.ndarray:
    """`np.argsort(bs, kind="stable")` of broker ids: int16 keys let numpy use a
    linear-time radix sort."""
    return np.argsort(bs.astype(np.int16) if model.n_brokers < 32000 else bs, kind="stable")


def _by_follower(
    model: ClusterModel, ps: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every follower cell of `ps` as (partition, slot, broker), brokers ascending,
    partitions in the order of `ps` within a broker: one pass for every middle
    broker of a chain."""
    followers = rows[:, 1:]
    i, k = np.nonzero(followers >= 0)
    b = followers[i, k]
    order = _broker_order(model, b)
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
    rows = model.assign.take(ps, axis=0)
    leaders = rows[:, 0]
    keep = (leaders != c) & ~model.frozen[ps] & model.leader_movable[ps]
    ps, rows, leaders = ps[keep], rows[keep], leaders[keep]
    ks = np.argmax(rows == c, axis=1)
    ok = _fits(model, c, model.lvec.take(ps, axis=0))
    ps, ks, leaders = ps[ok], ks[ok], leaders[ok]
    order = _broker_order(model, leaders)
    return ps[order], ks[order], leaders[order]


def _fresh(model: ClusterModel, ps: np.ndarray) -> np.ndarray:
    """1 for each partition of `ps` the plan doesn't list (its replica list as at the
    start), else 0: only these rows, as the whole table is large."""
    now, start = model.assign.take(ps, axis=0), model.initial.take(ps, axis=0)
    # column by column: numpy's all(axis=1) over a few columns is slow
    same = now[:, 0] == start[:, 0]
    for j in range(1, now.shape[1]):
        same &= now[:, j] == start[:, j]
    return same.astype(np.int64)


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
        p1s = p1s[_fits(model, a, -lvec.take(p1s, axis=0))]
        memo["a", a] = _by_follower(model, p1s, model.assign.take(p1s, axis=0))
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
    # partitions the plan doesn't list yet, of the givable and takeable leaderships
    if ("fresh a", a) not in memo:
        memo["fresh a", a] = _fresh(model, q1)
    if ("fresh c", c) not in memo:
        memo["fresh c", c] = _fresh(model, q2)
    keys = (
        memo["fresh a", a][i1] + memo["fresh c", c][i2],
        lvec[q1[i1], NW_OUT] + lvec[q2[i2], NW_OUT],
        b,
    )
    i = _first_fit(model, keys, b, (q1, i1), (q2, i2))
    if i < 0:
        return None
    return int(q1[i1[i]]), int(k1[i1[i]]), int(q2[i2[i]]), int(k2[i2[i]])


def _first_fit(
    model: ClusterModel,
    keys: tuple[np.ndarray, np.ndarray, np.ndarray],
    bs: np.ndarray,
    gained: tuple[np.ndarray, np.ndarray],
    lost: tuple[np.ndarray, np.ndarray],
) -> int:
    """The first row of the least `keys` (the first key first) among the rows
    `_fits_traded` accepts, or -1. Most rows fit: the rows of the least first key
    and the least few second keys (all of their ties) are tested first, in key
    order; when none fits, every row left of the least first key at once (where
    the constraints refuse most rows, a few at a time costs a call per few)."""
    (pg, ig), (pl, il) = gained, lost
    first, second, third = keys
    left = np.ones(bs.shape[0], dtype=bool)
    tries = FIRST_TRIES
    while True:
        rows = np.flatnonzero(left)
        if rows.shape[0] == 0:
            return -1
        key = first[rows]
        rows = rows[key == key.min()]
        key = second[rows]
        if rows.shape[0] > tries:
            rows = rows[key <= np.partition(key, tries - 1)[tries - 1]]
        rows = rows[np.lexsort((rows, third[rows], second[rows]))]
        fit = np.flatnonzero(_fits_traded(model, bs[rows], (pg, ig[rows]), (pl, il[rows])))
        if fit.shape[0]:
            return int(rows[fit[0]])
        left[rows] = False
        tries = bs.shape[0]


def leader_single(model: ClusterModel, a: int, c: int) -> tuple[int, int] | None:
    """One leadership change from broker a to broker c every registered constraint
    accepts: (p, k), the lightest in network out, or None."""
    if not (model.leader_dest[c] and model.usable[c]):
        return None
    ps = _led(model, a)
    has_c = model.assign.take(ps, axis=0) == c
    sel = has_c.any(axis=1)
    ps, ks = ps[sel], np.argmax(has_c[sel], axis=1)
    if ps.shape[0] == 0:
        return None
    vec = model.lvec.take(ps, axis=0)
    ok = _fits(model, a, -vec) & _fits(model, c, vec)
    ps, ks = ps[ok], ks[ok]
    if ps.shape[0] == 0:
        return None
    i = int(np.lexsort((ps, model.lvec[ps, NW_OUT]))[0])
    return int(ps[i]), int(ks[i])


def room_swaps(
    model: ClusterModel,
    a: int,
    *,
    more: bool = True,
    index: tuple[np.ndarray, np.ndarray] | None = None,
) -> list[tuple[int, int, int, int]]:
    """Leadership trades that leave every count as it is but give broker a more
    network out (a takes a heavier partition from d, d a lighter one from a), so
    that a may then hand a leadership on without falling under a band's lower edge,
    or with `more=False` less, so that a may then take one without going over a
    band: (p from a, its slot of d, q from d, its slot of a), most network out
    shifted first, a few per partner (the first p, then q, among equals).

    Every partner d is weighed at once: each pair (p, q) with the same d is a row.
    `index` is `model.replicas_by_broker()` of this or an earlier state with the
    same replica sets (built when not given)."""
    ok = model.usable & model.leader_dest
    ok[a] = False
    # what a may give: (p, d's slot, d), d ascending, p ascending within d
    ps = _led(model, a)
    p1, k1, d1 = _by_follower(model, ps, model.assign.take(ps, axis=0))
    keep = ok[d1]
    p1, k1, d1 = p1[keep], k1[keep], d1[keep]
    # what a may take: (q, a's slot, its leader d), d ascending, q ascending within d
    if index is None:
        index = model.replicas_by_broker()
    qs = np.sort(model.cells_of(index, a)[0])
    rows = model.assign.take(qs, axis=0)
    d2 = rows[:, 0]
    keep = (d2 != a) & ok[np.maximum(d2, 0)] & ~model.frozen[qs] & model.leader_movable[qs]
    qs, rows, d2 = qs[keep], rows[keep], d2[keep]
    has_a = rows == a
    keep = has_a.any(axis=1)
    qs, d2, k2 = qs[keep], d2[keep], np.argmax(has_a[keep], axis=1)
    order = _broker_order(model, d2)
    q2, k2, d2 = qs[order], k2[order], d2[order]
    # pairs (i1, i2) with the same partner d
    start = np.searchsorted(d2, d1, side="left")
    n = np.searchsorted(d2, d1, side="right") - start
    total = int(n.sum())
    if total == 0:
        return []
    i1 = np.repeat(np.arange(p1.shape[0]), n)
    first = np.cumsum(n) - n
    i2 = start[i1] + (np.arange(total) - first[i1])
    d = d1[i1]
    lvec = model.lvec
    fit = np.ones(total, dtype=bool)
    shift = np.zeros(total)
    for j in LEADER_MEASURES:  # the others are 0 in `lvec`
        net = lvec[q2[i2], j] - lvec[p1[i1], j]  # what a gains, d loses
        if j == NW_OUT:
            shift = net if more else -net
        fit &= _fits_one(model, np.full(total, a), j, net)
        fit &= _fits_one(model, d, j, -net)
    sel = np.flatnonzero(fit & (shift > 0))
    if sel.shape[0] == 0:
        return []
    # a few per partner: most shifted first, then the first row (p, then q)
    sel = sel[np.lexsort((sel, -shift[sel], d[sel]))]
    dd = d[sel]
    group = np.searchsorted(dd, dd, side="left")
    sel = sel[np.arange(sel.shape[0]) - group < 4]
    out = [
        (
            -float(shift[i]),
            int(d[i]),
            int(p1[i1[i]]),
            int(k1[i1[i]]),
            int(q2[i2[i]]),
            int(k2[i2[i]]),
        )
        for i in sel.tolist()
    ]
    out.sort()
    return [(p, k, q, kq) for _, _, p, k, q, kq in out]


def _fits_one(model: ClusterModel, bs: np.ndarray, j: int, delta: np.ndarray) -> np.ndarray:
    """Per row, may broker bs[i]'s measure j change by delta[i]? (`_fits` of one
    measure)"""
    cur = model.load[bs, j]
    new = cur + delta
    top = np.maximum(model.hi[bs, j], cur) + np.abs(cur) * TOL + TOL
    bottom = np.minimum(model.lo[bs, j], cur) - np.abs(cur) * TOL - TOL
    return (new <= top) & (new >= bottom)
