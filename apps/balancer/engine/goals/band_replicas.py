"""The band optimiser's replica step: single replica moves, most load per byte first.

Shedding sends replicas off brokers above the band to the least utilised brokers
every registered constraint accepts; filling sends replicas from the most utilised
brokers onto brokers below the band.
"""

from __future__ import annotations

import math

import numpy as np

from ..model import ClusterModel, first_fit
from .band_hooks import BandHooks
from .band_sources import source_candidates, source_open, step_sources
from .limits import MAX_FAILS, MAX_IDLE_SOURCES
from .tolerance import tolerance


def replica_moves(
    goal: BandHooks, model: ClusterModel, *, lo: np.ndarray, hi: np.ndarray, shed: bool
) -> int:
    """shed: move replicas off brokers above the band to the least utilised
    acceptable brokers. Otherwise (fill): move replicas from the most utilised
    brokers onto brokers below the band."""
    j = goal.measure
    load = model.load
    norm = model.norm[:, j]
    assign = model.assign
    x = load[:, j]
    step = step_sources(model, x=x, norm=norm, lo=lo, hi=hi, shed=shed)
    if step is None:
        return 0
    stop, dest_filter = step.stop, step.dest_filter
    index = model.replicas_by_broker()
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
        fails = 0
        done_at = float(stop[s] + tolerance(stop[s]))
        lo_s = float(lo[s])
        ps_l, ks_l, w_l = ps.tolist(), ks.tolist(), w.tolist()
        xs = float(x[s])  # x[s] as a plain float, kept in step with each move off s
        # brokers this pass may send to that have replica-count room (None: not known
        # since the last move), and the least weight found to fit none of them: a
        # heavier replica fits none either, x + w being monotone in w
        takes: np.ndarray | None = None
        refused_w = math.inf
        for i in goal.candidate_order(model, ps, w, s).tolist():
            if xs <= done_at or fails > MAX_FAILS:
                break
            p, k, wi = ps_l[i], ks_l[i], w_l[i]
            if assign[p, k] != s or xs - wi < lo_s:
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
                after = x + wi
                if not np.count_nonzero(takes & (after <= hi)):
                    refused_w = wi
                    fails += 1
                    continue
            else:
                after = x + wi
            vec = model.replica_vec(p, k)
            test = model.move_dest_test(p, k, vec)
            if test is None:
                fails += 1
                continue
            score = goal.dest_score(model, p, after, norm)
            d = first_fit(
                score,
                lambda b, f=dest_filter, a=after, test=test: bool(
                    f[b] and a[b] <= hi[b] and test(b)
                ),
            )
            if d < 0:  # none of the likeliest fits: the whole mask decides
                fit = dest_filter & (after <= hi)
                # unless `first_fit` tried every broker that fits this goal's band
                # (it set their scores to inf; the scores are finite otherwise)
                if not np.count_nonzero(fit & (score < np.inf)):
                    fails += 1
                    continue
                d = model.mask_pick(p, k, vec, fit, score)
                if d < 0:
                    fails += 1
                    continue
            if not shed and after[d] / norm[d] >= x[s] / norm[s]:
                fails += 1
                continue
            fails = 0
            model.move_replica(p, k, d, goal.name, vec)
            takes = None
            xs = float(x[s])
            moved += 1
            if not shed and not (x[d] < lo[d] - tolerance(lo[d])):
                dest_filter = dest_filter.copy()
                dest_filter[d] = False
                if not dest_filter.any():
                    break
        idle = idle + 1 if moved == moved_before else 0
    return moved
