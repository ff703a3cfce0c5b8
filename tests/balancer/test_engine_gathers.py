"""Helpers that read the model's tables another way than numpy's obvious form, for
speed, and must give exactly what that form gives: a leadership give's room test on
the leader measures (band_leaders), the partitions a plan doesn't list yet
(leader_chains), a broker's cells read by flat index (DiskModel.flat), the dirs'
counts (DiskModel._recount)."""

from __future__ import annotations

import numpy as np
from devkit.jbod_snapshot import dirs_add

from apps.balancer.engine.goals.band_leaders import _exceeds
from apps.balancer.engine.goals.leader_chains import _fresh
from apps.balancer.engine.measures import LEADER_MEASURES, N_MEASURES
from apps.balancer.engine.model import ClusterModel
from apps.balancer.engine.modes import setup_mode
from apps.balancer.engine.snapshot import parse_snapshot
from bench.bench_planner import make_cluster


def jbod_model(seed: int) -> ClusterModel:
    snap = parse_snapshot(dirs_add(make_cluster(6, 300, seed=seed), dirs=3, skew=0.5, seed=seed))
    model = ClusterModel(
        snap, setup_mode(snap, "full"), capacity_threshold=0.8, max_replicas_per_broker=10_000
    )
    model.disks_follow()
    return model


def test_a_gives_room_test_is_numpys_on_a_leaderships_load() -> None:
    rng = np.random.default_rng(1)
    special = np.array([0.0, 1.0, np.inf, -np.inf])
    for _ in range(400):
        vec = np.zeros(N_MEASURES)  # a leadership carries the leader measures only
        vec[list(LEADER_MEASURES)] = rng.choice(np.append(special[:2], rng.uniform(0, 2, 4)), 3)
        upper = rng.choice(np.append(special, rng.uniform(-1, 2, 4)), N_MEASURES)
        lower = rng.choice(np.append(special[:3], rng.uniform(-1, 2, 4)), N_MEASURES)
        with np.errstate(invalid="ignore"):
            want = bool(np.count_nonzero(vec > np.maximum(upper - lower, 0.0)))
        got = _exceeds(vec[list(LEADER_MEASURES)].tolist(), upper.tolist(), lower.tolist())
        assert got == want


def test_fresh_marks_the_partitions_whose_list_is_as_at_the_start() -> None:
    model = jbod_model(2)
    rng = np.random.default_rng(2)
    picked = rng.choice(model.n_partitions, 80, replace=False).tolist()
    for p in picked[:40]:
        model.move_leader(p, 1, "t")
    last = model.K - 1
    for p in picked[40:]:  # a change in the last slot only
        if model.rf_l[p] == model.K:
            free = np.setdiff1d(np.arange(model.n_brokers), model.assign[p])
            model.move_replica(p, last, int(free[0]), "t")
    ps = np.array(picked + rng.choice(model.n_partitions, 60).tolist())
    want = (model.assign[ps] == model.initial[ps]).all(axis=1).astype(np.int64)
    got = _fresh(model, ps)
    assert got.tolist() == want.tolist() and got.dtype == want.dtype
    assert 0 < got.sum() < ps.shape[0]


def test_a_brokers_cells_by_flat_index_are_those_by_pairs() -> None:
    disks = jbod_model(3).disks
    assert disks is not None
    for ps, ks in disks.broker_cells().values():
        flat = disks.flat(ps, ks)
        for table in (disks.dir, disks.can_move, disks.must_move):
            assert table.take(flat).tolist() == table[ps, ks].tolist()


def test_the_dirs_counts_are_those_of_the_cells_by_pairs() -> None:
    model = jbod_model(4)
    rng = np.random.default_rng(4)
    for p in rng.choice(model.n_partitions, 30, replace=False).tolist():
        free = np.setdiff1d(np.arange(model.n_brokers), model.assign[p])
        model.move_replica(p, 0, int(free[0]), "t")  # arrivals: no dir yet
    model.disks_follow()
    disks = model.disks
    assert disks is not None
    b, d = disks.total.shape
    p, k = np.nonzero(disks.dir >= 0)
    flat = disks.assign[p, k].astype(np.int64) * d + disks.dir[p, k]
    used = np.bincount(flat, weights=disks.size[p], minlength=b * d).reshape(b, d)
    lead = k == 0
    led = np.bincount(flat[lead], weights=disks.leader_bytes[p[lead]], minlength=b * d)
    assert disks.used.tobytes() == used.tobytes()
    assert disks.lead.tobytes() == led.reshape(b, d).tobytes()
    assert (disks.dir < 0).any()
