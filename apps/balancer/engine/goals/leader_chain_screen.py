"""Which broker pairs (a, c) can have no leadership chain a -> b -> c at all.

`leader_chain` searches one pair at a time; where the middle brokers' bands refuse
nearly every chain (network out at the band's top on most brokers, typically), a
caller trying many pairs spends its time on pairs with none. This screen rules
pairs out for all of them at once, from per broker pair summaries of one model
state: for each giver a and middle broker b, the least and greatest load (per
leadership measure) of a leadership a may give to b, as `leader_chain` takes them;
for each middle broker b and taker c, the same of a leadership c may take from b.
A chain needs a middle broker with both, on which some give and some take fit
b's bounds; with the least give against the greatest take (and the other way round)
each measure's bound is reached first, so a pair this screen refuses is a pair
`leader_chain` finds nothing for. It is exact as a refusal only: a pair it lets
through may still have no chain. Floating point keeps the order: the extreme
rows' sums are computed as `_fits_traded` computes any row's.

The screen is kept across a caller's moves: the model's change log
(`changed_since`) names the partitions to look at, and each pair's count of middle
brokers that pass is kept once asked for, brought up to date where moves touched.
"""

from __future__ import annotations

import numpy as np

from ..measures import LEADER_MEASURES
from ..model import ClusterModel
from .leader_chains import TOL

CHUNK = 256  # pairs screened at once (memory: pairs x brokers x measures)


def _fixed(model: ClusterModel) -> tuple[np.ndarray, ...]:
    """What no leadership change alters but the screen reads: when any of it
    changes, every entry is computed anew."""
    return (model.hi, model.lo, model.frozen, model.leader_movable, model.leader_dest, model.usable)


class ChainScreen:
    """Per leadership measure j, brokers (a, b): the least / greatest load j of a
    leadership a may give to b (+inf / -inf when none), and brokers (c, b): the same
    of a leadership c may take from b; with b's bounds as `_fits_traded` takes them.
    `refresh` brings it to the model's state."""

    def __init__(self, model: ClusterModel) -> None:
        n = self.n = model.n_brokers
        m = len(LEADER_MEASURES)
        self.give_min = np.full((m, n, n), np.inf)
        self.give_max = np.full((m, n, n), -np.inf)
        self.take_min = np.full((m, n, n), np.inf)
        self.take_max = np.full((m, n, n), -np.inf)
        # a measure every leadership carries alike (the leader count) changes no
        # middle broker by a give and a take: w - w is 0, and b's bounds hold b's
        # load; which pairs have any give or take every measure's tables tell alike
        w = model.lvec[:, list(LEADER_MEASURES)]
        varies = np.flatnonzero(w.min(axis=0) != w.max(axis=0)) if w.shape[0] else []
        self.varies = list(varies) or [0]
        # per pair (a, c), the middle brokers that pass (`_passing`), where `_known`
        self._count = np.zeros((n, n), dtype=np.int32)
        self._known = np.zeros((n, n), dtype=bool)
        self._build(model)

    def _build(self, model: ClusterModel) -> None:
        """Every entry from the model's state."""
        self._mark = model.changes_mark()
        self._assign = model.assign.copy()  # the replica lists the entries hold
        self._seen = tuple(a.copy() for a in _fixed(model))
        # the partitions each broker holds: leadership changes keep it true
        self._index = model.replicas_by_broker()
        self._state(model)
        for table in (self.give_min, self.take_min):
            table.fill(np.inf)
        for table in (self.give_max, self.take_max):
            table.fill(-np.inf)
        self._fill(model, np.arange(model.n_partitions), np.ones(self.n, dtype=bool))
        self._known.fill(False)

    def _state(self, model: ClusterModel) -> None:
        """The middle brokers, and each one's load and bounds per leadership measure."""
        self.mid = model.leader_dest & model.usable
        self.cur, self.top, self.bottom = [], [], []
        for j in LEADER_MEASURES:
            cur = model.load[:, j].copy()
            self.cur.append(cur)
            self.top.append(np.maximum(model.hi[:, j], cur) + np.abs(cur) * TOL + TOL)
            self.bottom.append(np.minimum(model.lo[:, j], cur) - np.abs(cur) * TOL - TOL)

    def refresh(self, model: ClusterModel) -> None:
        """Bring the screen to the model's state: the entries of brokers whose loads
        or partitions' replica lists changed since the last call, or all of them."""
        if not all(np.array_equal(a, b) for a, b in zip(self._seen, _fixed(model), strict=True)):
            self._build(model)
            return
        mark = model.changes_mark()
        ps = np.unique(model.changed_since(self._mark))
        self._mark = mark
        was, now = self._assign[ps], model.assign[ps]
        changed = (was != now).any(axis=1)
        ps, was, now = ps[changed], was[changed], now[changed]
        self._assign[ps] = now
        before = self.cur, self.top, self.bottom
        self._state(model)
        moved = np.zeros(self.n, dtype=bool)  # brokers whose load changed
        for old, new in zip(before[0], self.cur, strict=True):
            moved |= old != new
        touched = moved.copy()
        for cells in (was, now):
            touched[cells[cells >= 0]] = True
        if not touched.any():
            return
        if (np.sort(was, axis=1) != np.sort(now, axis=1)).any():
            self._index = model.replicas_by_broker()  # a replica moved
        # entries (x, y) change only in the rows x of touched brokers: each comes from
        # partitions x leads (gives) or follows (takes), filtered by x's load alone
        for table in (self.give_min, self.take_min):
            table[:, touched, :] = np.inf
        for table in (self.give_max, self.take_max):
            table[:, touched, :] = -np.inf
        order, starts = self._index
        held = [order[starts[b] : starts[b + 1]] for b in np.flatnonzero(touched).tolist()]
        self._fill(model, np.concatenate(held) // model.K, touched)
        # a pair of untouched brokers keeps its rows of entries: of its middle
        # brokers, only those whose load changed may pass or fail anew
        known = self._known
        redo = known & (touched[:, None] | touched[None, :])
        known &= ~redo
        counts = self._count.reshape(-1)
        bs = np.flatnonzero(moved)
        flat = np.flatnonzero(known) if bs.shape[0] else bs
        if flat.shape[0]:
            a, c = np.divmod(flat, self.n)
            counts[flat] -= self._passing(a, c, bs, *before)
            counts[flat] += self._passing(a, c, bs, self.cur, self.top, self.bottom)
        # the others counted anew: a caller asks for the same pairs again, mostly
        flat = np.flatnonzero(redo)
        if flat.shape[0]:
            a, c = np.divmod(flat, self.n)
            counts[flat] = self._passing(a, c, None, self.cur, self.top, self.bottom)
            known |= redo

    def _fill(self, model: ClusterModel, ps: np.ndarray, rows: np.ndarray) -> None:
        """Fold the cells of partitions `ps` (repeats fold alike: min and max keep
        them) into the tables' rows of brokers `rows` (a mask): gives by their
        leader, takes by their follower."""
        n = self.n
        assign = model.assign
        ps = ps[(assign[ps, 0] >= 0) & ~model.frozen[ps] & model.leader_movable[ps]]
        held = assign[ps]
        # gives: the partitions a broker of `rows` leads, with each of their followers
        mine = rows[held[:, 0]]
        gps, gheld = ps[mine], held[mine]
        leaders = gheld[:, 0]
        gives = np.ones(gps.shape[0], dtype=bool)
        # takes: the cells a broker of `rows` follows in, with their leader
        followers = held[:, 1:]
        i, k = np.nonzero((followers >= 0) & rows[np.maximum(followers, 0)])
        tps, tleaders, takers = ps[i], held[i, 0], followers[i, k]
        takes = np.ones(i.shape[0], dtype=bool)
        # `_fits` of the giver losing / the taker gaining a leadership, on the
        # measures a leadership carries (the others are 0 in `lvec`: they fit)
        for m, j in enumerate(LEADER_MEASURES):
            cur, top, bottom = self.cur[m], self.top[m], self.bottom[m]
            new = cur[leaders] - model.lvec[gps, j]
            gives &= (new <= top[leaders]) & (new >= bottom[leaders])
            new = cur[takers] + model.lvec[tps, j]
            takes &= (new <= top[takers]) & (new >= bottom[takers])
        gheld = gheld[gives]
        i, k = np.nonzero(gheld[:, 1:] >= 0)
        _fold(
            model.lvec,
            gps[gives][i],
            gheld[i, 0] * n + gheld[i, 1 + k],
            self.give_min,
            self.give_max,
        )
        _fold(
            model.lvec,
            tps[takes],
            takers[takes] * n + tleaders[takes],
            self.take_min,
            self.take_max,
        )

    def possible(self, a: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Per pair i, may some chain a[i] -> b -> c[i] exist? False only where
        `leader_chain(model, a[i], c[i])` finds none."""
        flat = a * self.n + c
        known = self._known.reshape(-1)
        counts = self._count.reshape(-1)
        need = flat[~known[flat]]
        if need.shape[0]:  # a pair listed twice is counted twice alike
            aa, cc = np.divmod(need, self.n)
            counts[need] = self._passing(aa, cc, None, self.cur, self.top, self.bottom)
            known[need] = True
        return counts[flat] > 0

    def _passing(
        self,
        a: np.ndarray,
        c: np.ndarray,
        bs: np.ndarray | None,
        cur: list[np.ndarray],
        top: list[np.ndarray],
        bottom: list[np.ndarray],
    ) -> np.ndarray:
        """Per pair i, how many middle brokers b (of `bs`, or all) some chain a[i] ->
        b -> c[i] may go through, with the middle brokers' loads and bounds `cur`,
        `top`, `bottom` (per measure, as `_state` keeps them)."""
        whole = bs is None
        cols = np.arange(self.n) if bs is None else bs
        mid = self.mid if whole else self.mid[cols]
        out = np.empty(a.shape[0], dtype=np.int32)
        step = max(1, CHUNK * self.n // max(cols.shape[0], 1))
        for s in range(0, a.shape[0], step):
            aa, cc = a[s : s + step], c[s : s + step]
            ok = cc[:, None] != cols  # b != c
            ok &= mid
            for m in self.varies:
                give_min, give_max = self.give_min[m], self.give_max[m]
                take_min, take_max = self.take_min[m], self.take_max[m]
                cb, tb, bb = cur[m], top[m], bottom[m]
                if whole:  # whole rows
                    gl, gh, tl, th = give_min[aa], give_max[aa], take_min[cc], take_max[cc]
                else:
                    ra, rc = aa[:, None], cc[:, None]
                    gl, gh = give_min[ra, bs], give_max[ra, bs]
                    tl, th = take_min[rc, bs], take_max[rc, bs]
                    cb, tb, bb = cb[bs], tb[bs], bb[bs]
                # cur + (give - take), as `_fits_traded` sums a row
                gl -= th
                gl += cb
                ok &= gl <= tb
                gh -= tl
                gh += cb
                ok &= gh >= bb
            out[s : s + step] = np.count_nonzero(ok, axis=1)
        return out


def _fold(
    lvec: np.ndarray, ps: np.ndarray, flat: np.ndarray, low: np.ndarray, high: np.ndarray
) -> None:
    """Per leadership measure m, fold lvec of `ps` into the (n, n) tables low[m] and
    high[m] by broker pair (row * n + column in `flat`)."""
    for m, j in enumerate(LEADER_MEASURES):
        w = lvec[ps, j]
        np.minimum.at(low[m].reshape(-1), flat, w)
        np.maximum.at(high[m].reshape(-1), flat, w)
