"""The cluster model's bookkeeping: room and slack in step with the loads, the one-broker
move test in step with the whole mask."""

from __future__ import annotations

import numpy as np

from apps.balancer.engine.measures import N_MEASURES
from apps.balancer.engine.model import SETTLE_ROWS, ClusterModel, exceeds
from apps.balancer.engine.modes import setup_mode
from apps.balancer.engine.snapshot import parse_snapshot
from tests.support.factories import MiB, broker, part, snapshot

N_BROKERS = 8


def banded_model(seed: int) -> ClusterModel:
    """A model of 8 brokers in 4 racks whose every measure has a band around its load."""
    rng = np.random.default_rng(seed)
    brokers = [
        broker(b, f"r{b % 4}", network_in=50 * MiB, network_out=80 * MiB, disk=1e11)
        for b in range(1, N_BROKERS + 1)
    ]
    parts = [
        part(
            f"t{i % 5}",
            i,
            [int(b) + 1 for b in rng.choice(N_BROKERS, size=3, replace=False)],
            bytes_in=float(rng.uniform(0, MiB)),
            bytes_out=float(rng.uniform(0, 2 * MiB)),
            size=float(rng.uniform(0, 1e9)),
        )
        for i in range(120)
    ]
    snap = parse_snapshot(snapshot(brokers, parts))
    model = ClusterModel(
        snap, setup_mode(snap, "full"), capacity_threshold=0.8, max_replicas_per_broker=1000
    )
    for j in range(N_MEASURES):
        x = model.load[:, j]
        model.tighten(j, x * rng.uniform(0.7, 1.0, N_BROKERS), x * rng.uniform(1.0, 1.3, N_BROKERS))
    return model


def assert_room_and_slack_in_step(model: ClusterModel) -> None:
    np.testing.assert_array_equal(model.room, np.maximum(model.hi - model.load, 0.0))
    np.testing.assert_array_equal(model.slack, np.maximum(model.load - model.lo, 0.0))


def free_broker(model: ClusterModel, p: int, i: int = 0) -> int:
    """The i-th broker (cyclically) holding no replica of p."""
    free = np.flatnonzero(~np.isin(np.arange(N_BROKERS), model.assign[p]))
    return int(free[i % free.shape[0]])


def test_room_and_slack_follow_each_move() -> None:
    model = banded_model(1)
    model.move_replica(0, 1, free_broker(model, 0), "t")
    assert_room_and_slack_in_step(model)
    model.move_leader(1, 1, "t")
    assert_room_and_slack_in_step(model)


def test_room_and_slack_follow_moves_on_more_brokers_than_settled_one_by_one() -> None:
    model = banded_model(2)
    for p in range(40):
        model.move_replica(p, p % 3, free_broker(model, p, p), "t")
    assert len(model._stale) > SETTLE_ROWS
    assert_room_and_slack_in_step(model)


def test_move_dest_test_agrees_with_the_mask() -> None:
    model = banded_model(3)
    for p in range(model.n_partitions):
        for k in range(model.rf_l[p]):
            mask = model.move_dest_mask(p, k)
            test = model.move_dest_test(p, k)
            assert (mask is None) == (test is None)
            if mask is not None and test is not None:
                assert [test(b) for b in range(N_BROKERS)] == mask.tolist()
        if p % 3 == 0:  # loads change as the test goes: the test reads them as they stand
            model.move_replica(p, 0, free_broker(model, p), "t")


def test_place_score_is_the_highest_ratio_to_target_after_adding_the_replica() -> None:
    model = banded_model(4)
    vec = model.replica_vec(5, 0)
    ratios = (model.load + vec) / model.place_target
    np.testing.assert_array_equal(model.place_score(vec), ratios[:, :4].max(axis=1))


def test_exceeds_is_the_room_test_of_numpy() -> None:
    rng = np.random.default_rng(3)
    special = np.array([0.0, -0.0, 1.0, np.inf, -np.inf])
    for _ in range(400):
        vec = rng.choice(np.concatenate([special, rng.uniform(-1, 2, 5)]), N_MEASURES)
        upper = rng.choice(np.concatenate([special, rng.uniform(-1, 2, 5)]), N_MEASURES)
        lower = rng.choice(np.concatenate([special[:4], rng.uniform(-1, 2, 5)]), N_MEASURES)
        with np.errstate(invalid="ignore"):
            want = bool(np.count_nonzero(vec > np.maximum(upper - lower, 0.0)))
        assert exceeds(vec.tolist(), upper.tolist(), lower.tolist()) == want


def test_move_ok_to_agrees_with_the_mask() -> None:
    for seed in range(4):
        model = banded_model(seed)
        for p in range(0, model.n_partitions, 3):
            for k in range(3):
                mask = model.move_dest_mask(p, k)
                for d in range(N_BROKERS):
                    want = mask is not None and bool(mask[d])
                    assert model.move_ok_to(p, k, d) == want, (seed, p, k, d)
