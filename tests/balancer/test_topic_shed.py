"""The topic goal's shed step (topic_shed.py) moves exactly the replicas a reference
form built on the model's generic pieces (`shed_reference` below) moves, to the same
brokers."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from apps.balancer.engine.goals.limits import MAX_FAILS
from apps.balancer.engine.goals.topic_replica_distribution import (
    TopicReplicaDistributionGoal,
    breaches,
    cost_ranks,
)
from apps.balancer.engine.goals.topic_shed import PLACE_CAP, Index, Shed
from apps.balancer.engine.model import PLACED, ClusterModel, first_fit
from tests.balancer.test_band_count_replicas import assert_same_state, skewed_model


def shed_reference(
    goal: TopicReplicaDistributionGoal,
    model: ClusterModel,
    index: Index,
    t: int,
    s: int,
    hi: np.ndarray,
    capped: bool,
) -> int:
    """Move replicas of topic t off broker s, above t's band, each to the fitting
    broker with fewest replicas of t, then least loaded: `topic_shed.Shed`'s search
    written with the model's generic pieces (`move_dest_test`, `first_fit`)."""
    tc = model.topic_count
    counts = tc[t]
    hi_t = int(hi[t])
    assign, K = model.assign.ravel(), model.K
    moved = fails = 0
    # the counts as floats, kept in step with this shed's moves: adding them to
    # the score casts nothing (the same figures: each count is exact as a float)
    counts_f: np.ndarray | None = None
    # the group as `_cells` would filter it, one cell at a time: a shed mostly
    # stops after a move or two
    order, starts = index
    group = t * model.n_brokers + s
    for c in order[int(starts[group]) : int(starts[group + 1])].tolist():
        if counts[s] <= hi_t or fails > MAX_FAILS:
            break
        if assign[c] != s:
            continue
        p = c // K
        k = c - p * K
        vec = model.replica_vec(p, k)
        test = model.move_dest_test(p, k, vec)
        if test is None:
            fails += 1
            continue
        if counts_f is None:
            counts_f = counts.astype(np.float64)
        # fewest replicas of this topic first, then the least loaded broker: the
        # figures of counts + min(place, PLACE_CAP) x 1e-7, in place in the fresh
        # array (no minimum to take where no place reaches the cap)
        score = model.place_score(vec)
        if capped:
            np.minimum(score, PLACE_CAP, out=score)
        score *= 1e-7
        score += counts_f
        # counts are integers: count + 1 <= hi is count < hi
        d = first_fit(score, lambda b, c=counts, test=test: bool(c[b] < hi_t and test(b)))
        if d < 0:  # none of the likeliest fits: the whole mask decides
            d = model.mask_pick(p, k, vec, counts < hi_t, score)
            if d < 0:
                fails += 1
                continue
        model.move_replica(p, k, d, goal.name, vec)
        counts_f[s] -= 1.0
        counts_f[d] += 1.0
        moved += 1
        fails = 0
    return moved


@pytest.mark.parametrize("mode", ["full", "add-brokers", "remove-brokers"])
def test_shed_moves_what_the_reference_shed_moves(mode: str) -> None:
    total = refused = 0
    for seed in range(6):
        model = skewed_model(seed, mode)
        goal = TopicReplicaDistributionGoal(1.0 + 0.05 * (seed % 3))
        goal.prepare(model)
        hi = goal._hi
        assert hi is not None
        if seed % 2 == 0:  # bands below the counts: sheds that run into the checks
            hi = np.maximum(hi - 1 - seed % 3, 0)
        if seed % 3 == 1:  # every broker's place figures past the cap, each its own
            rng = np.random.default_rng(seed)
            model.place_target = model.place_target * rng.uniform(1e-12, 1e-11, (10, 1))
            model._place_target_rows = np.ascontiguousarray(model.place_target[:, PLACED].T)
            assert float(model.place_score(model.replica_vec(0, 0)).min()) > PLACE_CAP
        if seed % 2:  # the model's topic bands (skewed_model's) cut into the goal's
            model.topic_hi[::2] = np.minimum(model.topic_hi[::2], hi[::2] - 1)
            model.topic_lo[1::3] = model.topic_count[1::3].max(axis=1)
        usable = np.flatnonzero(model.usable)
        generic, inline = model, copy.deepcopy(model)
        for capped in (True, False):
            ranks = cost_ranks(model.size)
            index = goal._index(generic, ranks)
            shed = Shed(inline, goal.name, hi, capped)
            t_over, b_over = breaches(generic.topic_count, hi, usable, above=True)
            for t, s in zip(t_over.tolist(), b_over.tolist(), strict=True):
                moved = shed_reference(goal, generic, index, t, s, hi, capped)
                assert shed(goal._index(inline, ranks), t, s) == moved
                assert_same_state(generic, inline)
                total += moved
                refused += generic.topic_count[t, s] > hi[t]
    assert total > 0 and refused > 0  # some sheds moved, some stopped short
