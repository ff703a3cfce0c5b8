"""The final movement pass: give back replica moves no goal needs (BALANCING.md §5).

Goals decide move by move, and a move needed when made may be needless once later
goals have moved other replicas. After every goal (and the leadership
pass) has run, and once more after the polish pass (polish.py), each replica the
net plan copies to a new broker is tried back on a broker that held it at the
start, largest first (the most bytes saved).

A give-back is kept only when every registered constraint accepts it (hard goals,
every soft goal's band, racks, per-topic counts; a violated goal never gets worse)
and, in addition, no broker ends more utilised than the most utilised one or less
than the least utilised one, per measure: each resource's balance figures stay
exactly as the goals left them, and the plan copies fewer bytes in fewer moves.

Replicas are given back one at a time, never two together (so that a broker at the
top of a count band keeps its count): a pair saves few more bytes for far more time.
"""

from __future__ import annotations

import numpy as np

from .measures import N_MEASURES
from .model import ClusterModel

GOAL = "movement-trim"
TOL = 1e-9
MAX_ROUNDS = 2


def hold_balance(model: ClusterModel) -> None:
    """Constrain every measure to the spread it has now (see the module docstring)."""
    u = model.usable
    if not u.any():
        return
    for j in range(N_MEASURES):
        util = model.load[u, j] / model.norm[u, j]
        hi = np.where(u, float(util.max()) * model.norm[:, j], np.inf)
        lo = np.where(u, float(util.min()) * model.norm[:, j], -np.inf)
        model.tighten(j, lo, hi)


class _Cells:
    """Replica cells on a broker that did not hold the partition at the start, largest
    partition first, with what each adds to its broker and whether a usable broker
    that held the partition at the start holds it no more (`home`, -1: none)."""

    def __init__(self, model: ClusterModel) -> None:
        init, assign = model.initial, model.assign
        changed = np.flatnonzero((init != assign).any(axis=1) & ~model.frozen)
        rows, old = assign[changed], init[changed]
        held = (rows[:, :, None] == old[:, None, :]).any(axis=2)
        pi, ki = np.nonzero((rows >= 0) & ~held)
        order = np.lexsort((ki, changed[pi], -model.size[changed[pi]]))
        pi, ki = pi[order], ki[order]
        self.p = changed[pi]
        self.k = ki
        self.on = rows[pi, ki]
        self.vec = model.fvec[self.p] + np.where((ki == 0)[:, None], model.lvec[self.p], 0.0)
        gone = ~(old[:, :, None] == rows[:, None, :]).any(axis=2) & (old >= 0)
        gone &= model.usable[np.maximum(old, 0)]
        gone = gone[pi]
        self.home = np.where(
            gone.any(axis=1), old[pi][np.arange(pi.shape[0]), np.argmax(gone, axis=1)], -1
        )


def trim(model: ClusterModel) -> int:
    """Give back replica moves no goal needs; returns how many it gives back."""
    hold_balance(model)
    given = 0
    for _ in range(MAX_ROUNDS):
        n = _round(model)
        given += n
        if n == 0:
            break
    return given


def _round(model: ClusterModel) -> int:
    cells = _Cells(model)
    if cells.p.shape[0] == 0:
        return 0
    # a cell whose broker can't lose it now (a band's lower edge) is not tried: the
    # broker's slack only shrinks as its cells go back
    ok = (cells.home >= 0) & model.movable[cells.p, cells.k]
    ok &= (cells.vec <= model.slack[cells.on] + TOL).all(axis=1)
    given = 0
    reasons = model.reasons
    room, usable = model.room, model.usable
    tc, topic_hi = model.topic_count, model.topic_hi
    # move_ok_to's per-topic ceiling (its usual refusal here), checked first
    topic_cap = None if topic_hi is None or model.topic_lo is None else np.maximum(topic_hi, 0)
    for i in np.flatnonzero(ok).tolist():
        p, k = int(cells.p[i]), int(cells.k[i])
        now = model.members(p)
        vec = cells.vec[i]
        t = model.topic_l[p]
        for home in model.initial[p, : model.rf_l[p]].tolist():
            if home in now or not usable[home] or np.count_nonzero(vec > room[home]):
                continue  # the cheap refusals first; move_ok_to checks everything
            if topic_cap is not None and tc[t, home] + 1 > topic_cap[t]:
                continue
            if model.move_ok_to(p, k, home):
                model.move_replica(p, k, home, GOAL)
                given += 1
                # a give-back is no reason for a change: the goals that made it stay
                r = reasons[p]
                r.remove(GOAL)
                if not r or (model.assign[p] == model.initial[p]).all():
                    del reasons[p]
                break
    return given
