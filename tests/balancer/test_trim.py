"""The final movement pass gives back moves no goal needs (BALANCING.md §5)."""

from __future__ import annotations

from collections.abc import Callable
from unittest import mock

import numpy as np

from apps.balancer.engine import PlannerOptions, optimizer, propose
from apps.balancer.engine import trim as trim_module
from apps.balancer.engine.model import ClusterModel
from tests.balancer.test_bench import bench


def test_it_gives_back_moves_and_bytes_without_changing_balance() -> None:
    snap = bench().make_cluster(20, 2_000)
    options = PlannerOptions()
    with mock.patch.object(optimizer, "polish", lambda model, goals: 0):  # test_polish.py
        pr = propose(snap, options=options)
        with mock.patch.object(optimizer, "trim", lambda model: 0):
            untrimmed = propose(snap, options=options)
    moved, was = pr.report["movement"], untrimmed.report["movement"]
    assert moved["given_back"] > 0
    assert moved["replica_moves"] == was["replica_moves"] - moved["given_back"]
    assert moved["bytes_moved"] < was["bytes_moved"]
    for name, fig in pr.report["balance"].items():
        was_fig = untrimmed.report["balance"][name]
        assert fig["after"] <= was_fig["after"] + 1e-9, name
        assert fig["min_after"] >= was_fig["min_after"] - 1e-9, name
    # the goals behind each change are still those that made it, never the pass
    assert all("movement-trim" not in m["goals"] and m["goals"] for m in pr.report["moves"])
    with mock.patch.object(optimizer, "polish", lambda model, goals: 0):
        assert propose(snap, options=options).plan == pr.plan  # deterministic


def _at_each_trim(check: Callable[[ClusterModel], None]) -> int:
    """propose on a bench cluster with `check(model)` run where each trim starts (the
    goals' end state, then polish's); how many times it ran."""
    real, runs = optimizer.trim, []

    def checked(model: ClusterModel) -> int:
        trim_module.hold_balance(model)
        check(model)
        runs.append(1)
        return real(model)

    with mock.patch.object(optimizer, "trim", checked):
        propose(bench().make_cluster(20, 2_000), options=PlannerOptions())
    return len(runs)


def _tried(model: ClusterModel) -> tuple[trim_module._Cells, trim_module._Tried]:
    cells = trim_module._Cells(model)
    return cells, trim_module._Tried(model, cells, np.arange(cells.p.shape[0]))


def test_hopeful_is_the_plain_numpy_form() -> None:
    seen = np.zeros(2, dtype=np.int64)

    def check(model: ClusterModel) -> None:
        _, tried = _tried(model)
        rng = np.random.default_rng(0)
        for start in range(0, tried.p.shape[0], 7):
            cut = slice(start, start + 7)
            homes = tried.homes[cut]
            now = model.assign[tried.p[cut]]
            held = (homes[:, :, None] == now[:, None, :]).any(axis=2)
            over = (tried.vec[cut][:, None, :] > model.room[homes]).any(axis=2)
            good = tried.open[cut] & ~held & ~over
            t = model.topic[tried.p[cut]]
            good &= model.topic_count[t[:, None], homes] + 1 <= tried.cap[t][:, None]
            got = trim_module._hopeful(model, tried, cut)
            assert got.tolist() == good.any(axis=1).tolist()
            seen[0] += got.sum()
            seen[1] += (~got).sum()
            # the model changes between blocks as trim's own give-backs do
            i = int(rng.integers(0, tried.p.shape[0]))
            trim_module._give_back(model, int(tried.p[i]), int(tried.k[i]), tried.vec[i], tried.cap)

    assert _at_each_trim(check) == 2
    assert seen.min() > 0


def test_return_to_is_the_first_start_broker_move_ok_to_accepts() -> None:
    seen = np.zeros(2, dtype=np.int64)

    def check(model: ClusterModel) -> None:
        cells, tried = _tried(model)
        for i in range(cells.p.shape[0]):
            p, k = int(cells.p[i]), int(cells.k[i])
            homes = model.initial[p, : model.rf_l[p]].tolist()
            want = next((h for h in homes if model.move_ok_to(p, k, h)), -1)
            assert trim_module._return_to(model, p, k, cells.vec[i], tried.cap) == want
            seen[int(want < 0)] += 1
            if want >= 0 and i % 3 == 0:  # the model as give-backs leave it
                trim_module._give_back(model, p, k, cells.vec[i], tried.cap)
        # every other topic at its floor on every broker: the source's topic check
        assert model.topic_lo is not None
        was = model.topic_lo
        floor = model.topic_count.max(axis=1)
        model.topic_lo = np.where(np.arange(was.shape[0]) % 2 == 0, floor, was)
        for i in range(cells.p.shape[0]):
            p, k = int(cells.p[i]), int(cells.k[i])
            homes = model.initial[p, : model.rf_l[p]].tolist()
            want = next((h for h in homes if model.move_ok_to(p, k, h)), -1)
            assert trim_module._return_to(model, p, k, cells.vec[i], tried.cap) == want
        model.topic_lo = was

    assert _at_each_trim(check) == 2
    assert seen.min() > 0
