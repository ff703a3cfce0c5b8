"""The cluster model's bookkeeping: room and slack in step with the loads, the one-broker
move test in step with the whole mask, the replica-count checks in step with the test."""

from __future__ import annotations

import numpy as np

from apps.balancer.engine.measures import N_MEASURES, REPLICAS
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


def count_banded_model(seed: int) -> ClusterModel:
    """`banded_model`'s cluster with only the replica count banded, some brokers at
    its edges and some exactly one replica inside them."""
    model = banded_model(seed)
    rng = np.random.default_rng(seed)
    model.hi[:] = np.inf
    model.lo[:] = -np.inf
    x = model.load[:, REPLICAS]
    steps = np.array([0.0, 0.5, 1.0, 3.0])
    for j in range(N_MEASURES):
        model.constrain(j, model.lo[:, j], model.hi[:, j])
    model.constrain(REPLICAS, x - rng.choice(steps, N_BROKERS), x + rng.choice(steps, N_BROKERS))
    return model


def assert_count_checks_agree_with_the_test(model: ClusterModel) -> tuple[int, int]:
    """Only the replica count is constrained: a broker takes no replica exactly where
    `count_full` says so, and gives none exactly where `count_spent` does. Returns
    how many brokers were full and how many spent."""
    cells = [(p, k) for p in range(model.n_partitions) for k in range(model.rf_l[p])]
    tests = [(p, k, model.move_dest_test(p, k)) for p, k in cells]
    full = model.count_full()
    for b in range(N_BROKERS):
        takes = any(test(b) for _, _, test in tests if test is not None)
        assert bool(full[b]) == (not takes)
        gives = [test is not None for p, k, test in tests if model.assign[p, k] == b]
        assert model.count_spent(b) == (not any(gives))
    return int(full.sum()), sum(model.count_spent(b) for b in range(N_BROKERS))


def test_replica_count_checks_agree_with_the_move_test() -> None:
    seen_full = seen_spent = 0
    for seed in range(4):
        model = count_banded_model(seed)
        full, spent = assert_count_checks_agree_with_the_test(model)
        # a few moves within the band, then again
        for p in range(0, 30, 3):
            test = model.move_dest_test(p, 1)
            dest = [b for b in range(N_BROKERS) if test is not None and test(b)]
            if dest:
                model.move_replica(p, 1, dest[0], "t")
        more_full, more_spent = assert_count_checks_agree_with_the_test(model)
        seen_full += full + more_full
        seen_spent += spent + more_spent
    assert seen_full and seen_spent  # both sides were put to the test


def test_source_refuses_where_the_mask_is_none() -> None:
    model = banded_model(5)
    rng = np.random.default_rng(5)
    # per-topic floors too: a broker at its topic's floor gives none of its replicas
    model.topic_lo = model.topic_count.max(axis=1) - rng.choice([0.0, 1.0, 9.0], model.n_topics)
    # and brokers with no slack at all on some measures: a replica adding none of
    # such a measure may still leave
    for j in range(N_MEASURES):
        model.tighten(j, np.where(rng.random(N_BROKERS) < 0.2, model.load[:, j], -np.inf), None)
    ps = np.repeat(np.arange(model.n_partitions), model.K)
    ks = np.tile(np.arange(model.K), model.n_partitions)
    refused = model.source_refuses(ps, ks).tolist()
    none = [model.move_dest_mask(p, k) is None for p, k in zip(ps, ks, strict=True)]
    assert refused == none
    assert 0 < sum(none) < len(none)


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
