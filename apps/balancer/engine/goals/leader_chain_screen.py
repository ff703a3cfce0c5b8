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
    of a leadership c may take from b; with b's bounds as `_fits_traded` takes them."""

    def __init__(self, model: ClusterModel) -> None:
        n = model.n_brokers
        self.n = n
        self.mid = model.leader_dest & model.usable
        assign = model.assign
        ps = np.flatnonzero((assign[:, 0] >= 0) & ~model.frozen & model.leader_movable)
        leaders = assign[ps, 0]
        followers = assign[ps, 1:]
        i, k = np.nonzero(followers >= 0)
        cells = ps[i], leaders[i], followers[i, k]  # (partition, leader, follower)
        self.cur, self.top, self.bottom = [], [], []
        gives = np.ones(ps.shape[0], dtype=bool)
        takes = np.ones(i.shape[0], dtype=bool)
        # `_fits` of the giver losing / the taker gaining a leadership, on the
        # measures a leadership carries (the others are 0 in `lvec`: they fit)
        for j in LEADER_MEASURES:
            cur = model.load[:, j]
            top = np.maximum(model.hi[:, j], cur) + np.abs(cur) * TOL + TOL
            bottom = np.minimum(model.lo[:, j], cur) - np.abs(cur) * TOL - TOL
            self.cur.append(cur)
            self.top.append(top)
            self.bottom.append(bottom)
            w = model.lvec[ps, j]
            new = cur[leaders] - w
            gives &= (new <= top[leaders]) & (new >= bottom[leaders])
            c = cells[2]
            new = cur[c] + w[i]
            takes &= (new <= top[c]) & (new >= bottom[c])
        gives = gives[i]
        self.give_min, self.give_max = _extremes(
            n, model.lvec, cells[0][gives], cells[1][gives] * n + cells[2][gives]
        )
        self.take_min, self.take_max = _extremes(
            n, model.lvec, cells[0][takes], cells[2][takes] * n + cells[1][takes]
        )

    def possible(self, a: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Per pair i, may some chain a[i] -> b -> c[i] exist? False only where
        `leader_chain(model, a[i], c[i])` finds none."""
        out = np.zeros(a.shape[0], dtype=bool)
        for s in range(0, a.shape[0], CHUNK):
            aa, cc = a[s : s + CHUNK], c[s : s + CHUNK]
            ok = np.broadcast_to(self.mid, (aa.shape[0], self.n)).copy()
            ok[np.arange(aa.shape[0]), cc] = False  # b != c
            for m in range(len(LEADER_MEASURES)):
                cur, top, bottom = self.cur[m], self.top[m], self.bottom[m]
                low = cur + (self.give_min[m][aa] - self.take_max[m][cc])
                ok &= low <= top
                high = cur + (self.give_max[m][aa] - self.take_min[m][cc])
                ok &= high >= bottom
            out[s : s + CHUNK] = ok.any(axis=1)
        return out


def _extremes(
    n: int, lvec: np.ndarray, ps: np.ndarray, flat: np.ndarray
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per leadership measure, the least and greatest lvec of `ps` by broker pair
    (row * n + column in `flat`) as (n, n) arrays, +inf / -inf where none."""
    lows, highs = [], []
    for j in LEADER_MEASURES:
        w = lvec[ps, j]
        low = np.full(n * n, np.inf)
        high = np.full(n * n, -np.inf)
        np.minimum.at(low, flat, w)
        np.maximum.at(high, flat, w)
        lows.append(low.reshape(n, n))
        highs.append(high.reshape(n, n))
    return lows, highs
