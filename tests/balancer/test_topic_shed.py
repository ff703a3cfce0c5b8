"""The topic goal's shed step (topic_shed.py) moves exactly the replicas the goal's
reference form (`TopicReplicaDistributionGoal._shed`) moves, to the same brokers."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from apps.balancer.engine.goals.topic_replica_distribution import (
    TopicReplicaDistributionGoal,
    breaches,
    cost_ranks,
)
from apps.balancer.engine.goals.topic_shed import PLACE_CAP, Shed
from apps.balancer.engine.model import PLACED
from tests.balancer.test_band_count_replicas import assert_same_state, skewed_model


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
                moved = goal._shed(generic, index, t, s, hi, capped)
                assert shed(goal._index(inline, ranks), t, s) == moved
                assert_same_state(generic, inline)
                total += moved
                refused += generic.topic_count[t, s] > hi[t]
    assert total > 0 and refused > 0  # some sheds moved, some stopped short
