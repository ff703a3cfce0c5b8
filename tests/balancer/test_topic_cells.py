"""The topic goal's (topic, broker) index gives each group's movable replicas in the
order a plain filter and stable sort by `ClusterModel.move_cost` gives them; the swap
test's bounds check on plain floats answers as numpy's form; the swap's walk over the
closest partner replicas picks those the whole mask picks; the out-of-band pairs come
in the order sorting every pair gives; the shed's cap on place figures is left out
only where no figure can reach it."""

from __future__ import annotations

import numpy as np

from apps.balancer.engine.goals.topic_replica_distribution import (
    PLACE_CAP,
    SWAP_TRIES,
    TopicReplicaDistributionGoal,
    breaches,
    cost_ranks,
    nearest,
    nearest_fitting,
    place_below,
)
from apps.balancer.engine.model import PLACED, ClusterModel, leaves_bounds
from apps.balancer.engine.modes import setup_mode
from apps.balancer.engine.snapshot import parse_snapshot
from bench.bench_planner import make_cluster


def moved_model(seed: int) -> ClusterModel:
    snap = parse_snapshot(make_cluster(6, 300, seed=seed))
    model = ClusterModel(
        snap, setup_mode(snap, "full"), capacity_threshold=0.8, max_replicas_per_broker=10_000
    )
    rng = np.random.default_rng(seed)
    for p in rng.choice(model.n_partitions, 60, replace=False).tolist():
        k = int(rng.integers(model.rf_l[p]))
        free = np.setdiff1d(np.arange(model.n_brokers), model.assign[p])
        model.move_replica(p, k, int(rng.choice(free)), "t")  # costs nothing to move on
    model.movable[rng.choice(model.n_partitions, 20), 1] = False
    model.frozen[rng.choice(model.n_partitions, 20)] = True
    return model


def test_cells_are_the_groups_movable_replicas_cheapest_first() -> None:
    model = moved_model(5)
    goal = TopicReplicaDistributionGoal(1.05)
    index = goal._index(model, cost_ranks(model.size))
    at_index = model.assign.copy()
    live = model.movable & ~model.frozen[:, None]
    rng = np.random.default_rng(6)
    for p in rng.choice(model.n_partitions, 40, replace=False).tolist():  # some leave
        free = np.setdiff1d(np.arange(model.n_brokers), model.assign[p])
        model.move_replica(p, 0, int(free[0]), "t")
    tied = 0
    for t in range(model.n_topics):
        for b in range(model.n_brokers):
            ps, ks = np.nonzero((at_index == b) & (model.topic[:, None] == t) & live)
            here = model.assign[ps, ks] == b
            ps, ks = ps[here], ks[here]
            cost = model.move_cost(ps, b)
            order = sorted(range(ps.shape[0]), key=cost.tolist().__getitem__)  # stable
            tied += int(ps.shape[0] - np.unique(cost).shape[0])
            assert goal._cells(model, index, t, b) == (
                [int(ps[i]) for i in order],
                [int(ks[i]) for i in order],
            )
    assert tied > 0  # equal costs keep cell order


def test_cost_ranks_order_costs_as_the_floats_do() -> None:
    size = np.array([5.0, 0.0, 2.5, 5.0, 1e12, 2.5, 7.0])
    n, rank = cost_ranks(size)
    costs = np.concatenate(([0.0], size))
    assert n == 5
    for i in range(costs.shape[0]):
        for j in range(costs.shape[0]):
            assert (rank[i] < rank[j]) == (costs[i] < costs[j])
            assert (rank[i] == rank[j]) == (costs[i] == costs[j])


def test_leaves_bounds_is_numpys_check() -> None:
    rng = np.random.default_rng(7)
    special = np.array([0.0, 1.0, np.inf, -np.inf, np.nan])
    seen = set()
    for _ in range(2000):
        cur, delta, upper, lower = (
            rng.choice(np.append(special, rng.uniform(-2, 2, 5)), 4) for _ in range(4)
        )
        with np.errstate(invalid="ignore"):  # inf - inf
            new = cur + delta
            want = bool(
                (new > np.maximum(upper, cur)).any() or (new < np.minimum(lower, cur)).any()
            )
        got = leaves_bounds(cur.tolist(), delta.tolist(), upper.tolist(), lower.tolist())
        assert got == want
        seen.add(got)
    assert seen == {True, False}


def test_nearest_fitting_is_nearest_over_those_that_fit() -> None:
    rng = np.random.default_rng(8)
    told = untold = 0
    for _ in range(3000):
        n = int(rng.integers(1, 60))
        # few distinct distances, so the cut often falls between equals
        dist = rng.choice(np.array([0.0, 0.5, 1.0, 1.5, 2.0, np.inf, np.nan]), n)
        if rng.random() < 0.5:
            dist = rng.uniform(0, 3, n)
        fit = rng.random(n) < rng.uniform(0.2, 1.0)
        got = nearest_fitting(dist, lambda i, fit=fit: bool(fit[i]), SWAP_TRIES)
        if got is None:
            untold += 1
            continue
        keep = np.flatnonzero(fit)
        assert got == keep.take(nearest(dist.take(keep), SWAP_TRIES)).tolist()
        told += 1
    assert told > 1000 and untold > 100


def test_breaches_are_every_pair_out_of_band_sorted() -> None:
    rng = np.random.default_rng(9)
    for _ in range(200):
        n_t, n_b = int(rng.integers(1, 30)), int(rng.integers(1, 12))
        tc = rng.integers(0, 6, (n_t, n_b)).astype(np.int32)
        lo = rng.integers(0, 4, n_t).astype(np.int64)
        hi = lo + rng.integers(0, 3, n_t)
        cols = np.flatnonzero(rng.random(n_b) < 0.8) if rng.random() < 0.5 else np.arange(n_b)
        for band, above in ((hi, True), (lo, False)):
            sub = tc[:, cols]
            gap = sub - band[:, None] if above else band[:, None] - sub
            t, c = np.nonzero(gap > 0)
            order = np.lexsort((c, t, -gap[t, c]))
            got_t, got_b = breaches(tc, band, cols, above=above)
            assert got_t.tolist() == t[order].tolist()
            assert got_b.tolist() == cols[c[order]].tolist()


def test_partner_replicas_are_the_brokers_grouped_cells() -> None:
    model = moved_model(10)
    goal = TopicReplicaDistributionGoal(1.05)
    lo, hi = goal.bands(model)
    at_start = model.assign.ravel().copy()
    scale = np.ones(3)
    for d in range(model.n_brokers):
        qs, js = model.cells_of(model.replicas_by_broker(), d)
        keep = model.movable[qs, js] & ~model.frozen[qs]
        got = goal._partner(model, at_start, d, lo, hi, scale)
        assert got[0].tolist() == qs[keep].tolist()
        assert got[1].tolist() == js[keep].tolist()


def test_place_below_holds_every_place_figure_under_the_cap() -> None:
    model = moved_model(11)
    assert place_below(model, PLACE_CAP)
    figures = np.concatenate(
        [model.place_score(model.replica_vec(p, k)) for p in range(60) for k in (0, 1)]
    )
    assert (np.minimum(figures, PLACE_CAP) == figures).all()
    top = float(figures.max())
    assert not place_below(model, top)  # a cap some figure reaches is refused
    assert not place_below(model, 4 * top)  # or one a few times above it
    target = model.place_target
    model.place_target = target.copy()
    model.place_target[2] *= 1e-9  # one broker's figures past the cap: refused
    model._place_target_rows = np.ascontiguousarray(model.place_target[:, PLACED].T)
    assert float(model.place_score(model.replica_vec(0, 0))[2]) > PLACE_CAP
    assert not place_below(model, PLACE_CAP)
    model.place_target = target
    model.fvec[3, 0] = np.nan
    assert not place_below(model, PLACE_CAP)
