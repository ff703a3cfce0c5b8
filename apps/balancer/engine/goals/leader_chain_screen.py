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
"""

from __future__ import annotations

import numpy as np

from ..measures import LEADER_MEASURES
from ..model import ClusterModel
from .leader_chains import TOL

CHUNK = 256  # pairs screened at once (memory: pairs x brokers x measures)


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
        self._seen: tuple | None = None
        # a measure every leadership carries alike (the leader count) changes no
        # middle broker by a give and a take: w - w is 0, and b's bounds hold b's
        # load; which pairs have any give or take every measure's tables tell alike
        w = model.lvec[:, list(LEADER_MEASURES)]
        varies = np.flatnonzero(w.min(axis=0) != w.max(axis=0)) if w.shape[0] else []
        self.varies = list(varies) or [0]
        self.refresh(model)

    def refresh(self, model: ClusterModel) -> None:
        """Bring the screen to the model's state: the entries of brokers whose loads
        or partitions' replica lists changed since the last call, or all of them."""
        assign = model.assign
        load = model.load[:, LEADER_MEASURES]
        fixed = (model.hi, model.lo, model.frozen, model.leader_movable, model.leader_dest)
        fixed += (model.usable,)
        seen = self._seen
        self._seen = (assign.copy(), load.copy(), tuple(a.copy() for a in fixed))
        self.mid = model.leader_dest & model.usable
        self.cur, self.top, self.bottom = [], [], []
        for j in LEADER_MEASURES:
            cur = model.load[:, j].copy()
            self.cur.append(cur)
            self.top.append(np.maximum(model.hi[:, j], cur) + np.abs(cur) * TOL + TOL)
            self.bottom.append(np.minimum(model.lo[:, j], cur) - np.abs(cur) * TOL - TOL)
        whole = seen is None or not all(
            np.array_equal(a, b) for a, b in zip(seen[2], fixed, strict=True)
        )
        if whole:
            ps = np.arange(model.n_partitions)
            touched = np.ones(self.n, dtype=bool)
        else:
            rows = np.flatnonzero((seen[0] != assign).any(axis=1))
            touched = (seen[1] != load).any(axis=1)
            for cells in (seen[0][rows], assign[rows]):
                touched[cells[cells >= 0]] = True
            if not touched.any():
                return
            # every entry of a touched broker comes from a partition it holds; the
            # entries of untouched brokers are unchanged since the last refresh, and
            # min / max over the touched brokers' partitions keep them
            ps = np.flatnonzero((touched[np.maximum(assign, 0)] & (assign >= 0)).any(axis=1))
        for table in (self.give_min, self.take_min):
            table[:, touched, :] = np.inf
            table[:, :, touched] = np.inf
        for table in (self.give_max, self.take_max):
            table[:, touched, :] = -np.inf
            table[:, :, touched] = -np.inf
        self._fill(model, ps)

    def _fill(self, model: ClusterModel, ps: np.ndarray) -> None:
        """Fold the cells of partitions `ps` into the tables."""
        n = self.n
        assign = model.assign
        ps = ps[(assign[ps, 0] >= 0) & ~model.frozen[ps] & model.leader_movable[ps]]
        leaders = assign[ps, 0]
        followers = assign[ps, 1:]
        i, k = np.nonzero(followers >= 0)
        cells = ps[i], leaders[i], followers[i, k]  # (partition, leader, follower)
        gives = np.ones(ps.shape[0], dtype=bool)
        takes = np.ones(i.shape[0], dtype=bool)
        # `_fits` of the giver losing / the taker gaining a leadership, on the
        # measures a leadership carries (the others are 0 in `lvec`: they fit)
        for m, j in enumerate(LEADER_MEASURES):
            cur, top, bottom = self.cur[m], self.top[m], self.bottom[m]
            w = model.lvec[ps, j]
            new = cur[leaders] - w
            gives &= (new <= top[leaders]) & (new >= bottom[leaders])
            c = cells[2]
            new = cur[c] + w[i]
            takes &= (new <= top[c]) & (new >= bottom[c])
        gives = gives[i]
        _fold(
            model.lvec,
            cells[0][gives],
            cells[1][gives] * n + cells[2][gives],
            self.give_min,
            self.give_max,
        )
        _fold(
            model.lvec,
            cells[0][takes],
            cells[2][takes] * n + cells[1][takes],
            self.take_min,
            self.take_max,
        )

    def possible(self, a: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Per pair i, may some chain a[i] -> b -> c[i] exist? False only where
        `leader_chain(model, a[i], c[i])` finds none."""
        out = np.zeros(a.shape[0], dtype=bool)
        for s in range(0, a.shape[0], CHUNK):
            aa, cc = a[s : s + CHUNK], c[s : s + CHUNK]
            ok = np.broadcast_to(self.mid, (aa.shape[0], self.n)).copy()
            ok[np.arange(aa.shape[0]), cc] = False  # b != c
            for m in self.varies:
                cur, top, bottom = self.cur[m], self.top[m], self.bottom[m]
                low = cur + (self.give_min[m][aa] - self.take_max[m][cc])
                ok &= low <= top
                high = cur + (self.give_max[m][aa] - self.take_min[m][cc])
                ok &= high >= bottom
            out[s : s + CHUNK] = ok.any(axis=1)
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
