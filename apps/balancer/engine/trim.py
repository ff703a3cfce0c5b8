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

import heapq

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
        # take: several times faster than fancy indexing, same rows
        rows, old = assign.take(changed, axis=0), init.take(changed, axis=0)
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
    (`open`), and its topic's ceiling where one is checked. `vec_k` repeats each load
    once per slot and `at` is each start broker's place in the flattened topic counts:
    `_hopeful` then gathers every row it needs in one take."""

    def __init__(self, model: ClusterModel, cells: _Cells, idx: np.ndarray) -> None:
        self.p = cells.p[idx]
        self.k = cells.k[idx]
        self.vec = cells.vec.take(idx, axis=0)
        self.vec_k = np.repeat(self.vec, model.K, axis=0)
        self.homes = model.initial.take(self.p, axis=0)
        live = np.arange(model.K)[None, :] < model.rf[self.p][:, None]
        self.open = live & model.usable[self.homes]
        self.cap = _topic_cap(model)
        topic = model.topic[self.p]
        self.topic_cap = None if self.cap is None else self.cap[topic][:, None]
        # a slot past rf (-1) lands on some count, and `open` leaves those slots out
        self.at = topic[:, None].astype(np.int64) * model.n_brokers + self.homes


def _hopeful(model: ClusterModel, tried: _Tried, cut: slice) -> np.ndarray:
    """Whether some start broker of each cell in `cut` passes `_give_back`'s cheap
    refusals as the model stands: the others are refused whole."""
    homes = tried.homes[cut]
    K = model.K
    # take: several times faster than fancy indexing, same rows
    now = model.assign.take(tried.p[cut], axis=0)
    # slot by slot: numpy's any() over a short axis is slow
    held = homes == now[:, :1]
    for j in range(1, K):
        held |= homes == now[:, j : j + 1]
    # every (cell, start broker) pair a row: its load against the broker's room
    pairs = slice(cut.start * K, cut.start * K + homes.size)
    over = np.logical_or.reduce(
        tried.vec_k[pairs] > model.room.take(homes.ravel(), axis=0), axis=1
    ).reshape(homes.shape)
    good = tried.open[cut] & ~held & ~over
    if tried.topic_cap is not None:
        # counts are integers: count + 1 > cap is count >= cap
        good &= model.topic_count.reshape(-1).take(tried.at[cut]) < tried.topic_cap[cut]
    hope = good[:, 0]
    for j in range(1, K):
        hope = hope | good[:, j]
    return hope


def _block(model: ClusterModel, tried: _Tried, cut: slice) -> int:
    """Try the cells in `cut` in order, those `_hopeful` passes and, after a give-back,
    those it may have made hopeful."""
    hope = _hopeful(model, tried, cut)
    K = model.K
    flat = tried.homes[cut].ravel()
    ps, ks, vecs = tried.p[cut].tolist(), tried.k[cut].tolist(), tried.vec[cut]
    given = 0
    # the cells still to try, smallest index first; every index in it is past the
    # cell being tried, so popping the least keeps the order
    todo = np.flatnonzero(hope).tolist()
    hoped = set(todo)
    while todo:
        i = heapq.heappop(todo)
        p, k = ps[i], ks[i]
        s = int(model.assign[p, k])
        d = _give_back(model, p, k, vecs[i], tried.cap)
        if d < 0:
            continue
        given += 1
        # loads are >= 0 (snapshot.py), so only s gained room and lost a topic
        # replica; d and p's members only refuse more (s never held p)
        for j in set((np.flatnonzero(flat[(i + 1) * K :] == s) // K + (i + 1)).tolist()):
            if j not in hoped:
                hoped.add(j)
                heapq.heappush(todo, j)
    return given


def _source_ok(model: ClusterModel, p: int, k: int, s: int, vl: list[float]) -> bool:
    """`move_ok_to`'s checks on the broker s the replica (p, k) leaves, the same for
    every destination: s's slack and its topic floor."""
    if exceeds(vl, model.load[s].tolist(), model.lo[s].tolist()):
        return False
    if model.topic_hi is not None and model.topic_lo is not None and model.usable[s]:
        t = model.topic_l[p]
        c = model.topic_count[t, s]
        if c - 1 < min(model.topic_lo[t], c):
            return False
    return True


def _return_to(
    model: ClusterModel, p: int, k: int, vec: np.ndarray, topic_cap: np.ndarray | None
) -> int:
    """The first start broker of p that may take replica (p, k) back (`move_ok_to`
    for each in turn), or -1 when none may."""
    now = model.members(p)
    vl = vec.tolist()
    if not _source_ok(model, p, k, now[k], vl):
        return -1
    t = model.topic_l[p]
    usable, tc, hi, load = model.usable, model.topic_count, model.hi, model.load
    full, leaving_full = model.rack_full(p, k)
    rl = model.rack_l
    for home in model.initial[p, : model.rf_l[p]].tolist():
        # a usable start broker may always take it back (`may_return`); then the
        # checks on home: not a member, room, rack, topic ceiling
        if home in now or not usable[home] or exceeds(vl, hi[home].tolist(), load[home].tolist()):
            continue
        if not leaving_full and rl[home] in full:
            continue
        if topic_cap is not None and tc[t, home] + 1 > topic_cap[t]:
            continue
        return home
    return -1


def _give_back(
    model: ClusterModel, p: int, k: int, vec: np.ndarray, topic_cap: np.ndarray | None
) -> int:
    """Move replica (p, k) back to the first start broker that may take it; that
    broker, or -1 when none may."""
    home = _return_to(model, p, k, vec, topic_cap)
    if home < 0:
        return -1
    model.move_replica(p, k, home, GOAL)
    # a give-back is no reason for a change: the goals that made it stay
    r = model.reasons[p]
    r.remove(GOAL)
    if not r or model.assign[p].tolist() == model.initial[p].tolist():
        del model.reasons[p]
    return home
