"""The replica step of the replica-count goal: `replica_moves` where each replica
weighs exactly 1 of the measure.

The same search as band_replicas.py, move for move: the same sources, candidates,
checks and destinations, hence the same plan (tests/balancer/test_band_count_replicas.py
holds the two to that). What it does cheaper: the count after a move (`after`, the
same for every replica) and the goal's destination score are kept in step with each
move rather than rebuilt per candidate; `first_fit` and the model's move test
(`ClusterModel.move_dest_test`) run with no closure built per move: the source side
inline on rows read once per source, skipping the measures without a floor on it, the
destination side through `ClusterModel.dest_fits`.
"""

from __future__ import annotations

import math

import numpy as np

from ..measures import REPLICAS
from ..model import FIRST_FIT_TRIES, ClusterModel, floor_refuses
from .band_hooks import BandHooks
from .band_sources import source_candidates, source_open, step_sources
from .limits import MAX_FAILS, MAX_IDLE_SOURCES
from .tolerance import tolerance


def count_replica_moves(
    goal: BandHooks, model: ClusterModel, *, lo: np.ndarray, hi: np.ndarray, shed: bool
) -> int:
    """`replica_moves` for a goal on REPLICAS whose `dest_score` is
    `ReplicaDistributionGoal`'s: the count after the move, plus the broker's replicas
    of the partition's topic * 1e-6."""
    j = goal.measure
    assert j == REPLICAS
    load = model.load
    norm = model.norm[:, j]
    assign = model.assign
    x = load[:, j]
    # a count's norm is 1 (`ClusterModel._init_norm`): x / norm is x
    assert bool((norm == 1.0).all())
    step = step_sources(model, x=x, norm=norm, lo=lo, hi=hi, shed=shed)
    if step is None:
        return 0
    stop, dest_filter = step.stop, step.dest_filter
    index = model.replicas_by_broker()
    # what no move of this step changes: the model's floors
    lo_rows = model.lo.tolist()
    usable_l = model.usable_l
    topic_l = model.topic_l
    tc = model.topic_count
    topic_lo, topic_hi = model.topic_lo, model.topic_hi
    rf_l = model.rf_l
    inf = math.inf
    # each broker's count after taking one more replica, and each topic's replicas
    # per broker as `dest_score` weighs them, kept in step with each move
    after = x + 1.0
    after_l = after.tolist()
    hi_l = hi.tolist()
    # (rows of one array: indexing a list costs less than a row view)
    tcs = list(tc * 1e-6)
    moved = 0
    idle = 0  # sources in a row that gave nothing: the rest likely won't either
    for s in step.sources:
        if idle >= MAX_IDLE_SOURCES:
            break
        opened = source_open(model, x=x, lo=lo, hi=hi, dest_filter=dest_filter, shed=shed)
        if opened is None:
            break  # no broker open to new replicas has room left
        dest_filter, max_room = opened
        if model.count_spent(s):  # every candidate would fail the model's test
            idle += 1
            continue
        moved_before = moved
        ps, ks, w = source_candidates(goal, model, index, s, x=x, lo=lo, max_room=max_room)
        assert bool((w == 1.0).all())  # what `after` holds: x + w
        fails = 0
        done_at = float(stop[s] + tolerance(stop[s]))
        lo_s = float(lo[s])
        ps_l, ks_l, w_l = ps.tolist(), ks.tolist(), w.tolist()
        xs = float(x[s])  # x[s] as a plain float, kept in step with each move off s
        load_s = load[s].tolist()  # likewise s's loads (where `floored` reads them)
        lo_row_s = lo_rows[s]
        # the measures with a floor on s: the others are never short of slack
        # (load - -inf is inf)
        floored = [m for m, lob in enumerate(lo_row_s) if lob != -math.inf]
        usable_s = usable_l[s]
        f_l = dest_filter.tolist()
        # brokers this pass may send to that have replica-count room (None: not known
        # since the last move), and the least weight found to fit none of them: a
        # heavier replica fits none either, x + w being monotone in w
        takes: np.ndarray | None = None
        refused_w = math.inf
        for i in goal.candidate_order(model, ps, w, s).tolist():
            if xs <= done_at or fails > MAX_FAILS:
                break
            p, k, wi = ps_l[i], ks_l[i], w_l[i]
            if assign.item(p, k) != s or xs - wi < lo_s:
                fails += 1
                continue
            if fails:
                # in a run of rejections, the checks every replica shares first: in
                # a goal after replica-distribution most candidates fail on the count
                if takes is None:
                    if model.count_spent(s):
                        break  # and so would every candidate left
                    takes = dest_filter & ~model.count_full()
                    refused_w = math.inf
                if wi >= refused_w:
                    fails += 1
                    continue
                if not np.count_nonzero(takes & (after <= hi)):
                    refused_w = wi
                    fails += 1
                    continue
            # `move_dest_test`'s source side: the loads s may still give, the topic floor
            vec = model.replica_vec(p, k)
            vl = vec.tolist()
            t = topic_l[p]
            if floor_refuses(vl, floored, load_s, lo_row_s) or (
                topic_lo is not None and usable_s and tc[t, s] - 1 < topic_lo[t]
            ):
                fails += 1
                continue
            rf = rf_l[p]
            members = assign[p, :rf].tolist()
            banned = model.banned_racks(p, k, members)
            cap = None if topic_hi is None else max(topic_hi[t], 0)
            score = tcs[t] + after  # `dest_score`: after + counts * 1e-6
            # `first_fit` with the fit inline: this goal's band, then the model's test
            d = -1
            for _ in range(FIRST_FIT_TRIES):
                b = int(score.argmin())
                if score.item(b) == inf:
                    break  # every broker left scores inf: argmin tells none apart
                if (
                    f_l[b]
                    and after_l[b] <= hi_l[b]
                    and model.dest_fits(b, p, members, banned, cap, t, vl)
                ):
                    d = b
                    break
                score[b] = inf
            if d < 0:  # none of the likeliest fits: the whole mask decides
                fit = dest_filter & (after <= hi)
                # unless the tries above covered every broker that fits this goal's
                # band (they set their scores to inf; the scores are finite otherwise)
                if not np.count_nonzero(fit & (score < np.inf)):
                    fails += 1
                    continue
                d = model.mask_pick(p, k, vec, fit, score)
                if d < 0:
                    fails += 1
                    continue
            if not shed and after[d] >= x[s]:  # the norm of a count is 1
                fails += 1
                continue
            fails = 0
            model.move_replica(p, k, d, goal.name, vec)
            if floored:
                load_s = load[s].tolist()
            xs = x.item(s)
            xd = x.item(d)
            after[s] = after_l[s] = xs + 1.0
            after[d] = after_l[d] = xd + 1.0
            tcs_t = tcs[t]
            tcs_t[s] = tc.item(t, s) * 1e-6
            tcs_t[d] = tc.item(t, d) * 1e-6
            takes = None
            moved += 1
            if not shed and not (x[d] < lo[d] - tolerance(lo[d])):
                dest_filter = dest_filter.copy()
                dest_filter[d] = False
                f_l[d] = False
                if not dest_filter.any():
                    break
        idle = idle + 1 if moved == moved_before else 0
    return moved
