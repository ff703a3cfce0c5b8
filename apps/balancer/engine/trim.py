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
from .model import ClusterModel, exceeds

GOAL = "movement-trim"
TOL = 1e-9
MAX_ROUNDS = 2
BLOCK = 256  # cells judged at once before they are tried one by one


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
        init, assign, K = model.initial, model.assign, model.K
        # column by column: numpy's any(axis=1) over a few columns is slow
        differs = init[:, 0] != assign[:, 0]
        for j in range(1, K):
            differs |= init[:, j] != assign[:, j]
        changed = np.flatnonzero(differs & ~model.frozen)
        rows, old = assign[changed], init[changed]
        new = rows >= 0
        # the first usable start broker that holds the partition no more, per row
        home = np.full(changed.shape[0], -1, dtype=old.dtype)
        for j in reversed(range(K)):
            o = old[:, j]
            gone = o >= 0
            for k in range(K):
                gone &= o != rows[:, k]
                new[:, j] &= rows[:, j] != old[:, k]
            gone &= model.usable[np.maximum(o, 0)]
            home = np.where(gone, o, home)
        pi, ki = np.nonzero(new)
        # nonzero lists cells by partition, then slot: a stable sort keeps that order
        # among partitions of one size
        order = np.argsort(-model.size[changed[pi]], kind="stable")
        pi, ki = pi[order], ki[order]
        self.p = changed[pi]
        self.k = ki
        self.on = rows[pi, ki]
        # rows gathered with take: several times faster than fancy indexing, same rows
        self.vec = model.fvec.take(self.p, axis=0)
        lead = np.flatnonzero(ki == 0)
        self.vec[lead] += model.lvec.take(self.p[lead], axis=0)
        self.home = home[pi]


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
    tried = _Tried(model, cells, np.flatnonzero(ok))
    given = 0
    for start in range(0, tried.p.shape[0], BLOCK):
        given += _block(model, tried, slice(start, start + BLOCK))
    return given


def _topic_cap(model: ClusterModel) -> np.ndarray | None:
    """move_ok_to's per-topic ceiling (its usual refusal here); None: not checked."""
    if model.topic_hi is None or model.topic_lo is None:
        return None
    return np.maximum(model.topic_hi, 0)


class _Tried:
    """The cells a round tries, in order, with what no give-back changes: each cell's
    partition, slot, load, start brokers (`homes`), which of those are usable and real
    (`open`), and its topic's ceiling where one is checked."""

    def __init__(self, model: ClusterModel, cells: _Cells, idx: np.ndarray) -> None:
        self.p = cells.p[idx]
        self.k = cells.k[idx]
        self.vec = cells.vec.take(idx, axis=0)
        self.homes = model.initial.take(self.p, axis=0)
        live = np.arange(model.K)[None, :] < model.rf[self.p][:, None]
        self.open = live & model.usable[self.homes]
        self.cap = _topic_cap(model)
        topic = model.topic[self.p]
        self.topic = topic[:, None]
        self.topic_cap = None if self.cap is None else self.cap[topic][:, None]


def _hopeful(model: ClusterModel, tried: _Tried, cut: slice) -> np.ndarray:
    """Whether some start broker of each cell in `cut` passes `_give_back`'s cheap
    refusals as the model stands: the others are refused whole."""
    homes = tried.homes[cut]
    # a slot past rf holds -1 in both lists, and `open` leaves those slots out
    now = model.assign[tried.p[cut]]
    # slot by slot and measure by measure: numpy's any() over a short axis is slow
    held = homes == now[:, :1]
    for j in range(1, model.K):
        held |= homes == now[:, j : j + 1]
    vec, room = tried.vec[cut], model.room[homes]
    over = vec[:, None, 0] > room[:, :, 0]
    for m in range(1, vec.shape[1]):
        over |= vec[:, None, m] > room[:, :, m]
    good = tried.open[cut] & ~held & ~over
    if tried.topic_cap is not None:
        good &= ~(model.topic_count[tried.topic[cut], homes] + 1 > tried.topic_cap[cut])
    return good.any(axis=1)


def _block(model: ClusterModel, tried: _Tried, cut: slice) -> int:
    """Try the cells in `cut` in order, those `_hopeful` passes and, after a give-back,
    those it may have made hopeful."""
    hope = _hopeful(model, tried, cut)
    homes = tried.homes[cut]
    ps, ks, vecs = tried.p[cut], tried.k[cut], tried.vec[cut]
    given = 0
    todo = np.flatnonzero(hope).tolist()
    n = 0
    while n < len(todo):
        i = todo[n]
        n += 1
        p, k = int(ps[i]), int(ks[i])
        s = int(model.assign[p, k])
        d = _give_back(model, p, k, vecs[i], tried.cap)
        if d < 0:
            continue
        given += 1
        # loads are >= 0 (snapshot.py), so only s gained room and lost a topic
        # replica; d and p's members only refuse more (s never held p)
        hope[i + 1 :] |= (homes[i + 1 :] == s).any(axis=1)
        todo = (np.flatnonzero(hope[i + 1 :]) + (i + 1)).tolist()
        n = 0
    return given


def _give_back(
    model: ClusterModel, p: int, k: int, vec: np.ndarray, topic_cap: np.ndarray | None
) -> int:
    """Move replica (p, k) back to the first start broker that may take it; that
    broker, or -1 when none may."""
    now = model.members(p)
    t = model.topic_l[p]
    usable, tc, hi, load = model.usable, model.topic_count, model.hi, model.load
    vl = vec.tolist()
    for home in model.initial[p, : model.rf_l[p]].tolist():
        # the cheap refusals first (vec > room[home] read from hi and the load, so no
        # row of room is settled); move_ok_to checks everything
        if home in now or not usable[home] or exceeds(vl, hi[home].tolist(), load[home].tolist()):
            continue
        if topic_cap is not None and tc[t, home] + 1 > topic_cap[t]:
            continue
        if model.move_ok_to(p, k, home):
            model.move_replica(p, k, home, GOAL)
            # a give-back is no reason for a change: the goals that made it stay
            r = model.reasons[p]
            r.remove(GOAL)
            if not r or (model.assign[p] == model.initial[p]).all():
                del model.reasons[p]
            return home
    return -1
