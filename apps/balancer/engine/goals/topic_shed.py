"""The topic goal's shed step: replicas of a topic off a broker above the topic's band.

Each move goes to the fitting broker with fewest replicas of the topic, then least
loaded. tests/balancer/test_topic_shed.py holds it, move for move, to a reference form
written with the model's generic pieces (`move_dest_test`, `first_fit`, `place_score`):
the same cells in the same order, the same checks, scores and destinations. What it
does cheaper than that form: the floors are read once per optimize, `first_fit` and
the model's move test run with no closure built per move (the source side inline on
plain floats, the destination side through `ClusterModel.dest_fits`), and the place
score is computed into buffers kept across moves (the same float operations in the
same order, so the same figures).
"""

from __future__ import annotations

import math

import numpy as np

from ..model import FIRST_FIT_TRIES, PLACED, ClusterModel, floor_refuses
from .limits import MAX_FAILS

PLACE_CAP = 1e6  # a shed's place figures are capped here, so counts decide first

# replica cells grouped by (topic, broker); see `TopicReplicaDistributionGoal._index`
Index = tuple[np.ndarray, np.ndarray]


class Shed:
    """One optimize's shed step for the goal `name` with the topics' upper bands `hi`
    (`capped`: whether a place figure may reach PLACE_CAP, see `place_below`)."""

    def __init__(self, model: ClusterModel, name: str, hi: np.ndarray, capped: bool) -> None:
        self.model = model
        self.name = name
        self.capped = capped
        self.hi_l: list[int] = hi.tolist()
        # what no move of the goal changes: the floors
        lo_rows = model.lo.tolist()
        self.lo_rows = lo_rows
        # per broker, the measures with a floor: the others never refuse a source
        # (load - -inf is inf, or NaN where the load is -inf: no v exceeds either)
        self.floored = [[m for m, x in enumerate(row) if x != -math.inf] for row in lo_rows]
        # place_score's rows and a buffer for its ratios, and the (B,) score
        b = model.n_brokers
        self.load_placed = model.load.T[PLACED]  # a view: follows every move
        self.target_rows = model._place_target_rows
        self.ratio = np.empty((self.target_rows.shape[0], b))
        self.score = np.empty(b)

    def __call__(self, index: Index, t: int, s: int) -> int:
        model = self.model
        tc = model.topic_count
        hi_t = self.hi_l[t]
        cs = tc.item(t, s)  # the count of t on s, kept in step with this shed's moves
        if cs <= hi_t:
            return 0
        order, starts = index
        group = t * model.n_brokers + s
        cells = order[starts.item(group) : starts.item(group + 1)].tolist()
        assign = model.assign
        flat = assign.ravel()
        K = model.K
        load = model.load
        fvec, lvec = model.fvec, model.lvec
        lo_s = self.lo_rows[s]
        floored = self.floored[s]
        load_s = load[s].tolist() if floored else []
        topic_lo, topic_hi = model.topic_lo, model.topic_hi
        rf_l = model.rf_l
        load_placed, target_rows = self.load_placed, self.target_rows
        ratio, score = self.ratio, self.score
        capped = self.capped
        inf = math.inf
        # `move_dest_test`'s topic cap on a destination and topic floor on s
        cap = None if topic_hi is None else max(topic_hi[t], 0)
        floor_s = None if topic_lo is None or not model.usable_l[s] else float(topic_lo[t])
        counts_f: np.ndarray | None = None
        moved = fails = 0
        for c in cells:
            if cs <= hi_t or fails > MAX_FAILS:
                break
            if flat.item(c) != s:
                continue
            p, k = divmod(c, K)
            vec = fvec[p] + lvec[p] if k == 0 else fvec[p]  # `replica_vec`
            vl = vec.tolist()
            # `move_dest_test`'s source side: the loads s may still give, the topic floor
            if floor_refuses(vl, floored, load_s, lo_s) or (
                floor_s is not None and cs - 1 < floor_s
            ):
                fails += 1
                continue
            rf = rf_l[p]
            members = assign[p, :rf].tolist()
            banned = model.banned_racks(p, k, members)
            if counts_f is None:
                counts_f = tc[t].astype(np.float64)
            # `place_score` into the buffers, then as the goal's shed scores it
            np.add(load_placed, vec[PLACED, None], out=ratio)
            ratio /= target_rows
            np.maximum.reduce(ratio, axis=0, out=score)
            if capped:
                np.minimum(score, PLACE_CAP, out=score)
            score *= 1e-7
            score += counts_f
            # `first_fit` with the fit inline: the count, then the model's test
            d = -1
            for _ in range(FIRST_FIT_TRIES):
                b = int(score.argmin())
                if score.item(b) == inf:
                    break  # every broker left scores inf: argmin tells none apart
                n = tc.item(t, b)
                if n < hi_t and model.dest_fits(b, p, members, banned, cap, t, vl):
                    d = b
                    break
                score[b] = inf
            if d < 0:  # none of the likeliest fits: the whole mask decides
                d = model.mask_pick(p, k, vec, tc[t] < hi_t, score)
                if d < 0:
                    fails += 1
                    continue
            model.move_replica(p, k, d, self.name, vec)
            counts_f[s] -= 1.0
            counts_f[d] += 1.0
            cs -= 1
            if floored:
                load_s = load[s].tolist()
            moved += 1
            fails = 0
        return moved
