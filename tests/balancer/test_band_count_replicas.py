"""The replica-count goal's replica step (band_count_replicas.py) moves exactly the
replicas the generic step (band_replicas.py) moves, to the same brokers."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from apps.balancer.engine.goals.band_count_replicas import count_replica_moves
from apps.balancer.engine.goals.band_replicas import replica_moves
from apps.balancer.engine.goals.replica_distribution import ReplicaDistributionGoal
from apps.balancer.engine.measures import DISK, NW_IN, REPLICAS
from apps.balancer.engine.model import ClusterModel
from apps.balancer.engine.modes import setup_mode
from apps.balancer.engine.snapshot import parse_snapshot
from tests.support.factories import MiB, broker, part, snapshot

N_BROKERS = 10


def skewed_model(seed: int, mode: str) -> ClusterModel:
    """10 brokers in 3 racks, most replicas on the first few; replication factors of
    2 to 4 (4 puts two replicas in a rack); some measures near a cap, some with a
    floor, and per-topic bands on odd seeds. The broker-count modes add or remove
    the last broker."""
    rng = np.random.default_rng(seed)
    brokers = [
        broker(b, f"r{b % 3}", network_in=40 * MiB, network_out=80 * MiB, disk=2e11)
        for b in range(1, N_BROKERS + 1)
    ]
    weights = np.linspace(3.0, 0.2, N_BROKERS)
    weights /= weights.sum()
    parts = [
        part(
            f"t{i % 7}",
            i,
            [int(b) + 1 for b in rng.choice(N_BROKERS, size=rf, replace=False, p=weights)],
            bytes_in=float(rng.uniform(0, MiB)),
            bytes_out=float(rng.uniform(0, 2 * MiB)),
            size=float(rng.uniform(0, 1e9)),
        )
        for i, rf in enumerate(rng.choice([2, 3, 3, 4], size=300))
    ]
    snap = parse_snapshot(snapshot(brokers, parts))
    brokers_arg = [N_BROKERS] if mode in ("add-brokers", "remove-brokers") else []
    model = ClusterModel(
        snap,
        setup_mode(snap, mode, brokers_arg),
        capacity_threshold=0.8,
        max_replicas_per_broker=1000,
    )
    if mode == "remove-brokers":  # every replica may move: the usable mask at work
        model.movable[:] = True
    # caps a few brokers reach, floors some brokers sit on
    mean = model.load.mean(axis=0)
    model.tighten(NW_IN, None, np.full(N_BROKERS, mean[NW_IN] * rng.uniform(1.0, 1.4)))
    share = model.load[:, REPLICAS].sum() / model.n_usable
    model.tighten(REPLICAS, None, share * rng.uniform(0.9, 1.3, N_BROKERS))
    floor = np.where(rng.random(N_BROKERS) < 0.3, model.load[:, DISK] * 0.9, -np.inf)
    model.tighten(DISK, floor, None)
    # replicas an earlier goal moved off the lighter brokers: moves may take them back
    # there whatever the mode (`may_return`)
    for p in range(0, 300, 7):
        row = model.members(p)
        light = [b for b in row if b >= N_BROKERS // 2]
        if light and 0 not in row:
            model.move_replica(p, row.index(light[0]), 0, "earlier")
    if seed % 2:
        spread = model.topic_count.sum(axis=1) / N_BROKERS
        model.topic_hi = np.ceil(spread * 1.3)
        model.topic_lo = np.floor(spread * 0.5)
    return model


def assert_same_state(a: ClusterModel, b: ClusterModel) -> None:
    np.testing.assert_array_equal(a.assign, b.assign)
    np.testing.assert_array_equal(a.load, b.load)
    np.testing.assert_array_equal(a.topic_count, b.topic_count)
    np.testing.assert_array_equal(a.frozen, b.frozen)
    assert a.reasons == b.reasons
    assert a.counters == b.counters


@pytest.mark.parametrize("mode", ["full", "add-brokers", "remove-brokers"])
def test_count_step_moves_what_the_generic_step_moves(mode: str) -> None:
    total = 0
    for seed in range(6):
        model = skewed_model(seed, mode)
        goal = ReplicaDistributionGoal(1.0 + 0.05 * (seed % 3))
        goal.prepare(model)
        lo, hi = goal._lo, goal._hi
        assert lo is not None and hi is not None
        # on most seeds, bands of any width and not whole numbers, each broker's its
        # own: around the ideal, or with tops some lighter brokers are already above
        rng = np.random.default_rng(seed)
        sharing = np.isfinite(hi)
        if seed % 3 == 2:
            mid = float((lo[sharing] + hi[sharing]).mean() / 2.0)
            lo = np.where(sharing, mid - rng.uniform(0.0, 12.0, N_BROKERS), lo)
            hi = np.where(sharing, mid + rng.uniform(0.0, 12.0, N_BROKERS), hi)
        elif seed % 3 == 1:
            lo = np.where(sharing, hi - rng.uniform(6.0, 30.0, N_BROKERS), lo)
            hi = np.where(sharing, lo + rng.uniform(0.0, 18.0, N_BROKERS), hi)
        generic, counted = model, copy.deepcopy(model)
        for shed in (True, False, True, False):
            moved = replica_moves(goal, generic, lo=lo, hi=hi, shed=shed)
            assert count_replica_moves(goal, counted, lo=lo, hi=hi, shed=shed) == moved
            assert_same_state(generic, counted)
            total += moved
    assert total > 0  # the steps had something to do
