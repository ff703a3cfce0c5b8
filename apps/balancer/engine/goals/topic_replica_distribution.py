"""Soft goal: each topic's replicas spread evenly over the brokers.

For topic t with n_t replicas over B usable brokers, ideal_t = n_t / B and a
broker's count of t must lie within [min(floor(ideal), ceil((2 - t) x ideal)),
max(ceil(ideal), floor(t x ideal))]: a count within floor/ceil of the ideal is
always balanced (BALANCING.md §4).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..model import PLACED, ClusterModel
from .count_band import count_bands
from .goal import Goal
from .judging import MAX_OFFENDERS, broker_offender, judgement
from .limits import MAX_ROUNDS
from .topic_shed import PLACE_CAP, Index, Shed

FILL_SOURCES = 8  # brokers with most replicas of the topic tried per short broker
FILL_TRIES = 4  # replicas tried per source
MAX_IDLE_PAIRS = 500
SWAP_PARTNER_BROKERS = 4  # brokers short of the topic tried per crowded pair
SWAP_CANDIDATES = 3  # replicas of the crowded topic tried per partner
SWAP_TRIES = 6  # closest-load partner replicas tried per candidate
MAX_SWAP_PAIRS = 3000  # most crowded (topic, broker) pairs tried per swap pass


class TopicReplicaDistributionGoal(Goal):
    name = "topic-replica-distribution"
    hard = False

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self._lo: np.ndarray | None = None
        self._hi: np.ndarray | None = None

    def bands(self, model: ClusterModel) -> tuple[np.ndarray, np.ndarray]:
        total = model.topic_count[:, model.usable].sum(axis=1)
        _, lo, hi = count_bands(total, model.n_usable, self.threshold)
        return lo.astype(np.int64), hi.astype(np.int64)

    def prepare(self, model: ClusterModel) -> None:
        self._lo, self._hi = self.bands(model)

    def register(self, model: ClusterModel) -> None:
        if self._lo is None:
            self.prepare(model)
        model.topic_lo, model.topic_hi = self._lo, self._hi

    def violation(self, model: ClusterModel) -> float:
        lo, hi = self.bands(model)
        tc = model.topic_count[:, model.usable]
        over = np.maximum(tc - hi[:, None], 0).sum()
        under = np.maximum(lo[:, None] - tc, 0).sum()
        return float(over + under)

    def judge(self, model: ClusterModel) -> dict:
        lo, hi = self.bands(model)
        usable = np.flatnonzero(model.usable)
        tc = model.topic_count[:, usable]
        over = np.maximum(tc - hi[:, None], 0)
        under = np.maximum(lo[:, None] - tc, 0)
        t_bad, b_bad = np.nonzero((over + under) > 0)
        dist = (over + under)[t_bad, b_bad]
        order = np.lexsort((b_bad, t_bad, -dist))[:MAX_OFFENDERS]
        ideal = tc.sum(axis=1) / max(model.n_usable, 1)
        ids = model.snap.broker_ids
        offenders = []
        for i in order.tolist():
            t, c = int(t_bad[i]), int(b_bad[i])
            topic = model.snap.topics[t]
            entry = broker_offender(
                broker=int(ids[usable[c]]),
                who=f"broker {int(ids[usable[c]])} (topic {topic})",
                side="above" if over[t, c] > 0 else "below",
                value=float(tc[t, c]),
                lo=float(lo[t]),
                hi=float(hi[t]),
                scale=float(ideal[t]),
                scale_name="mean",
            )
            offenders.append({"topic": topic, **entry})
        return judgement(float((over + under).sum()), offenders, int(t_bad.shape[0]))

    def _index(self, model: ClusterModel, ranks: tuple[int, np.ndarray]) -> Index:
        """The movable, unfrozen replica cells grouped by (topic, broker): cell order
        and where each group starts in it (group t x B + b). Within a group, fewest
        bytes added to the plan by moving the cell off its broker first
        (`ClusterModel.move_cost`), cells of equal cost in cell order. The goal moves
        no leader and no frozen partition, so which cells are movable holds while
        the index is in use, and a cell's cost is fixed by its broker."""
        b = model.n_brokers
        assign = model.assign
        key = model.topic.astype(np.int64)[:, None] * b + assign
        live = (assign >= 0) & model.movable & ~model.frozen[:, None]
        key = np.where(live, key, -1).ravel()
        # held[p, k]: the broker of slot k held p at the start (slot by slot: numpy's
        # any(axis=1) over a few columns is slow)
        initial = model.initial
        held = initial[:, :1] == assign
        for i in range(1, initial.shape[1]):
            held |= initial[:, i : i + 1] == assign
        # costs as ranks (`cost_ranks`), so one integer sort orders by (group, cost):
        # stable, so cells of equal key and cost stay in cell order
        n_ranks, rank = ranks
        cost_rank = np.where(held, rank[1:, None], rank[0]).ravel()
        order = np.argsort(key * n_ranks + cost_rank, kind="stable")
        # int32: one entry per (topic, broker) group is many; the sums run in place in
        # bincount's own array (a cumsum cast into int32 on the way runs slowly)
        n_dead = int((key < 0).sum())
        sizes = np.bincount(key[key >= 0] if n_dead else key, minlength=model.n_topics * b)
        np.cumsum(sizes, out=sizes)
        starts = np.empty(model.n_topics * b + 1, dtype=np.int32)
        starts[0] = 0
        starts[1:] = sizes
        starts += n_dead
        return order, starts

    def _group(self, model: ClusterModel, index: Index, t: int, b: int) -> list[int]:
        """The cells `_index` put in group (topic t, broker b), in its order; some may
        have left b since."""
        order, starts = index
        key = t * model.n_brokers + b
        return order[int(starts[key]) : int(starts[key + 1])].tolist()

    def _cells(
        self, model: ClusterModel, index: Index, t: int, b: int
    ) -> tuple[list[int], list[int]]:
        """The movable replicas of topic t still on broker b (partitions, slots),
        fewest bytes added to the plan first (a count goal)."""
        assign, K = model.assign.ravel(), model.K
        ps, ks = [], []
        for c in self._group(model, index, t, b):
            if assign[c] == b:
                p = c // K
                ps.append(p)
                ks.append(c - p * K)
        return ps, ks

    def optimize(self, model: ClusterModel) -> None:
        if self._lo is None:
            self.prepare(model)
        lo, hi = self._lo, self._hi
        assert lo is not None and hi is not None
        if not model.movable.any():
            return
        usable_idx = np.flatnonzero(model.usable)
        usable_dest = usable_idx[model.dest[usable_idx]]
        ranks = cost_ranks(model.size)
        # whether a shed's min(place, PLACE_CAP) can ever be below the place itself
        capped = not place_below(model, PLACE_CAP)
        shed = Shed(model, self.name, hi, capped)
        for _ in range(MAX_ROUNDS):
            tc = model.topic_count
            t_over, b_over = breaches(tc, hi, usable_idx, above=True)
            t_under, b_under = breaches(tc, lo, usable_dest, above=False)
            if t_over.shape[0] == 0 and t_under.shape[0] == 0:
                return
            index = self._index(model, ranks)
            moved = 0
            idle = 0  # (topic, broker) pairs in a row without a move end the pass
            for t, s in zip(t_over.tolist(), b_over.tolist(), strict=True):
                if idle >= MAX_IDLE_PAIRS:
                    break
                n = shed(index, t, s)
                moved += n
                idle = 0 if n else idle + 1
            moved += self._swap_pass(model, index, lo, hi, usable_idx)
            idle = 0
            for t, d in zip(t_under.tolist(), b_under.tolist(), strict=True):
                if idle >= MAX_IDLE_PAIRS:
                    break
                n = self._fill(model, index, t, d, lo, hi)
                moved += n
                idle = 0 if n else idle + 1
            if moved == 0:
                return

    def _fill(
        self,
        model: ClusterModel,
        index: Index,
        t: int,
        d: int,
        lo: np.ndarray,
        hi: np.ndarray,
    ) -> int:
        tc = model.topic_count
        moved = 0
        sources = np.flatnonzero(model.usable & (tc[t] > lo[t]) & (tc[t] > tc[t, d] + 1))
        sources = sources[np.argsort(-tc[t, sources], kind="stable")][:FILL_SOURCES]
        for s in sources.tolist():
            if tc[t, d] >= lo[t]:
                break
            ps, ks = self._cells(model, index, t, s)
            for p, k in zip(ps[:FILL_TRIES], ks[:FILL_TRIES], strict=True):
                if tc[t, d] >= lo[t] or tc[t, s] <= max(lo[t], tc[t, d] + 1):
                    break
                if model.assign[p, k] != s or not model.move_ok_to(p, k, d):
                    continue
                model.move_replica(p, k, d, self.name)
                moved += 1
                break
        return moved

    def _swap_pass(
        self,
        model: ClusterModel,
        index: Index,
        lo: np.ndarray,
        hi: np.ndarray,
        usable_idx: np.ndarray,
    ) -> int:
        """Where a plain move would break an earlier goal, trade a replica of the
        crowded topic for a replica of similar load of another topic."""
        tc = model.topic_count
        t_over, b_over = breaches(tc, hi, usable_idx, above=True)
        if t_over.shape[0] == 0:
            return 0
        # the assignment as the pass starts: a partner's replicas are those it held then
        at_start = model.assign.ravel().copy()
        cache: dict[int, tuple[np.ndarray, ...]] = {}
        # topic counts by broker, kept in step by `_swap_one`: one broker's counts
        # are then contiguous, so taking a partner's topics from them stays in cache
        counts = np.ascontiguousarray(tc.T)
        scale = np.where(np.isfinite(model.place_target), model.place_target, 1.0).mean(axis=0)
        moved = idle = 0
        pairs = zip(t_over[:MAX_SWAP_PAIRS].tolist(), b_over[:MAX_SWAP_PAIRS].tolist(), strict=True)
        for t, s in pairs:
            if idle >= MAX_IDLE_PAIRS:
                break
            n = 0
            if tc[t, s] > hi[t]:
                n = self._swap_one(model, index, at_start, cache, counts, t, s, lo, hi, scale)
            moved += n
            idle = 0 if n else idle + 1
        return moved

    def _swap_one(
        self,
        model: ClusterModel,
        index: Index,
        at_start: np.ndarray,
        cache: dict[int, tuple[np.ndarray, ...]],
        counts: np.ndarray,
        t: int,
        s: int,
        lo: np.ndarray,
        hi: np.ndarray,
        scale: np.ndarray,
    ) -> int:
        tc = model.topic_count
        cols = [0, 1, 2]  # network in, network out, disk: keep them where they are
        partners = np.flatnonzero(model.dest & (tc[t] + 1 <= hi[t]))
        partners = partners[np.argsort(tc[t, partners], kind="stable")][:SWAP_PARTNER_BROKERS]
        ps, ks = self._cells(model, index, t, s)
        assign_flat = model.assign.ravel()  # a view: a take by flat cell is cheap
        at_s = counts[s]
        initial = model.initial
        back_only = not model.dest[s]  # add-brokers: only a replica that came from s goes back
        for d in partners.tolist():
            if d not in cache:
                cache[d] = self._partner(model, at_start, d, lo, hi, scale[cols])
            qs, js, cell, t2, lo2, hi2, vq = cache[d]
            at_d = counts[d]

            # the partner's replica must be of a topic s can take and d can spare
            # (what changes from partner to partner bound as defaults)
            def fits(
                i: int, d: int = d, at_d: np.ndarray = at_d, part: tuple = (qs, cell, t2, lo2, hi2)
            ) -> bool:
                qs, cell, t2, lo2, hi2 = part
                u = t2[i]
                return bool(
                    u != t
                    and at_s[u] + 1 <= hi2[i]
                    and at_d[u] - 1 >= lo2[i]
                    and assign_flat[cell[i]] == d
                    and (not back_only or s in initial[qs[i]].tolist())
                )

            keep: np.ndarray | None = None  # the fitting replicas, when a walk can't tell
            for p, k in zip(ps[:SWAP_CANDIDATES], ks[:SWAP_CANDIDATES], strict=True):
                if model.assign[p, k] != s:
                    continue
                va = model.replica_vec(p, k)[cols] / scale[cols]
                gap = vq - va[:, None]
                np.abs(gap, out=gap)
                # the same sum, in the same order, as summing each row of |vq - va|
                dist = gap[0] + gap[1]
                dist += gap[2]
                near = nearest_fitting(dist, fits, SWAP_TRIES)
                if near is None:  # the whole mask decides
                    if keep is None:
                        ok = (
                            (t2 != t)
                            & (at_s.take(t2) + 1 <= hi2)
                            & (at_d.take(t2) - 1 >= lo2)
                            & (assign_flat.take(cell) == d)
                        )
                        if back_only:
                            ok &= (initial[qs] == s).any(axis=1)
                        keep = np.flatnonzero(ok)
                    if keep.shape[0] == 0:
                        break
                    near = keep.take(nearest(dist.take(keep), SWAP_TRIES)).tolist()
                for jdx in near:
                    q, j = int(qs[jdx]), int(js[jdx])
                    if model.assign[q, j] != d or not model.swap_ok(p, k, q, j):
                        continue
                    model.move_replica(p, k, d, self.name)
                    model.move_replica(q, j, s, self.name)
                    model.counter(self.name).swaps += 1
                    tq = model.topic_l[q]
                    counts[s, t] -= 1
                    counts[d, t] += 1
                    counts[d, tq] -= 1
                    counts[s, tq] += 1
                    return 1
        return 0

    @staticmethod
    def _partner(
        model: ClusterModel,
        at_start: np.ndarray,
        d: int,
        lo: np.ndarray,
        hi: np.ndarray,
        scale: np.ndarray,
    ) -> tuple[np.ndarray, ...]:
        """Broker d's movable replicas as of this pass (`at_start`: the flat assignment
        as it began; `_swap_one` rechecks each is still there): partitions, slots, flat
        cells, topics with their bands, and the (3, n) network in, network out and disk
        of each, scaled."""
        # in cell order, as `ClusterModel.cells_of` lists them; one broker's cells by a
        # compare costs less than grouping every broker's
        cells = np.flatnonzero(at_start == d)
        qs, js = cells // model.K, cells % model.K
        keep = model.movable[qs, js] & ~model.frozen[qs]
        qs, js = qs[keep], js[keep]
        cols = [0, 1, 2]
        vq = model.fvec[qs][:, cols] + np.where(js[:, None] == 0, model.lvec[qs][:, cols], 0.0)
        t2 = model.topic[qs]
        vq_t = np.ascontiguousarray((vq / scale).T)
        return qs, js, qs * model.K + js, t2, lo[t2], hi[t2], vq_t


def cost_ranks(size: np.ndarray) -> tuple[int, np.ndarray]:
    """How many distinct costs a replica cell can have (0 or its partition's size),
    and the rank of each among them: 0's first, then each partition's; equal costs
    share a rank, a lower cost has a lower rank."""
    costs, rank = np.unique(np.concatenate(([0.0], size)), return_inverse=True)
    return int(costs.shape[0]), rank.ravel()


def place_below(model: ClusterModel, cap: float) -> bool:
    """Whether every figure `ClusterModel.place_score` can give, for any replica of the
    model on any broker at any point of the plan, is below `cap` by a wide margin (so
    min(figure, cap) is the figure). A broker's load of a measure is a sum of replicas'
    figures, so neither it nor a replica's exceeds all replicas' together in size; a
    NaN anywhere answers no."""
    k = model.assign.shape[1]
    fvec, lvec = model.fvec[:, PLACED], model.lvec[:, PLACED]
    total = k * np.abs(fvec).sum(axis=0) + np.abs(lvec).sum(axis=0)
    worst = 2.0 * total / model.place_target[:, PLACED].min(axis=0)
    # the margin covers the rounding of the sums many times over
    return bool(np.all(worst < cap / 16))


def breaches(
    tc: np.ndarray, band: np.ndarray, cols: np.ndarray, *, above: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The (topic, broker) pairs, over the brokers `cols` (sorted), whose count
    tc[t, b] is above band[t] (`above`) or below it: farthest out first, then by
    topic, then by broker. Only the topics whose highest (lowest) count over `cols`
    is out of band are looked at pair by pair: most topics have none."""
    if cols.shape[0] == 0:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty
    whole = cols.shape[0] == tc.shape[1]  # every broker: no copy of the columns
    sub = tc if whole else tc[:, cols]
    if above:
        rows = np.flatnonzero(sub.max(axis=1) > band)
    else:
        rows = np.flatnonzero(sub.min(axis=1) < band)
    sub = sub.take(rows, axis=0)
    gap = sub - band[rows, None] if above else band[rows, None] - sub
    r, c = np.nonzero(gap > 0)
    order = np.lexsort((c, r, -gap[r, c]))
    return rows.take(r.take(order)), cols.take(c.take(order))


SWAP_LOOK = 16  # closest partner replicas `nearest_fitting` sorts before it walks


def nearest(dist: np.ndarray, tries: int) -> np.ndarray:
    """The positions of the `tries` least of `dist`, least first (lower position among
    equals); which of several equal at the cut is numpy's argpartition's choice."""
    if dist.shape[0] > tries:  # the closest few, without a full sort
        near = np.argpartition(dist, tries)[:tries]
        return near[np.lexsort((near, dist[near]))]
    return np.lexsort((np.arange(dist.shape[0]), dist))


def nearest_fitting(dist: np.ndarray, fits: Callable[[int], bool], tries: int) -> list[int] | None:
    """`nearest` over the positions that `fits` (mapped back to positions in `dist`),
    found by testing the closest few one at a time instead of the whole array; None
    when they can't tell: fewer than `tries` fit among them, or the cut falls between
    equal distances (argpartition's choice among them is its own)."""
    if dist.shape[0] <= SWAP_LOOK:
        return None
    part = np.argpartition(dist, SWAP_LOOK)
    # everything outside the head is at least `edge`; the head is least first
    edge = dist[part[SWAP_LOOK]]
    head = part[:SWAP_LOOK]
    head = head[np.lexsort((head, dist[head]))]
    found: list[int] = []
    for i in head.tolist():
        if not dist[i] < edge:  # what comes after may tie with what lies outside
            break
        if fits(i):
            if len(found) == tries:  # the next that fits: is the cut between equals?
                return found if dist[i] > dist[found[-1]] else None
            found.append(i)
    # any further that fits is at least `edge`, above the last found
    return found if len(found) == tries else None
