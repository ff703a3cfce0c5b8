"""The chain screen (goals/leader_chain_screen.py) never refuses a broker pair for
which the full search (`leader_chain`) finds a chain, and does refuse some.

Random clusters (fixed seeds), loads drawn from a few values, tight bands on the
measures a leadership carries so that the middle brokers refuse many chains, some
leaderships already changed, and now and then a demoted broker (which may not lead).
"""

from __future__ import annotations

import numpy as np
import pytest

from apps.balancer.engine.goals import leader_chain_screen
from apps.balancer.engine.goals.leader_chain_screen import ChainScreen
from apps.balancer.engine.goals.leader_chains import leader_chain
from apps.balancer.engine.measures import LEADER_MEASURES
from apps.balancer.engine.model import ClusterModel
from apps.balancer.engine.modes import setup_mode
from apps.balancer.engine.snapshot import parse_snapshot
from tests.support.factories import broker, part, snapshot

LOADS = [0.0, 1.0, 2.0, 3.0, 5.0, 8.0]


def random_model(seed: int) -> ClusterModel:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 10))
    brokers = [broker(b) for b in range(1, n + 1)]
    parts = []
    for i in range(int(rng.integers(20, 80))):
        rf = int(rng.integers(1, 4))
        reps = [int(r) for r in rng.permutation(n)[:rf] + 1]
        parts.append(
            part(
                "t",
                i,
                reps,
                bytes_in=float(rng.choice(LOADS)),
                bytes_out=float(rng.choice(LOADS)),
            )
        )
    parsed = parse_snapshot(snapshot(brokers, parts))
    mode, chosen = ("demote", [1]) if rng.random() < 0.3 else ("full", [])
    model = ClusterModel(
        parsed, setup_mode(parsed, mode, chosen), capacity_threshold=0.8, max_replicas_per_broker=0
    )
    model.open_leadership()
    for j in LEADER_MEASURES:
        x = model.load[:, j]
        hi = np.where(rng.random(n) < 0.2, np.inf, x * rng.choice([1.0, 1.02, 1.1, 1.5], n))
        model.tighten(j, x * rng.choice([0.0, 0.9, 1.0], n), hi)
    for p in rng.choice(model.n_partitions, 4, replace=False).tolist():
        if model.rf_l[p] > 1:
            model.move_leader(p, 1, "test")
    return model


def test_it_never_refuses_a_pair_with_a_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(leader_chain_screen, "CHUNK", 7)  # pairs span several chunks
    chains = refused = 0
    for seed in range(150):
        model = random_model(seed)
        n = model.n_brokers
        a, c = (g.ravel() for g in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
        possible = ChainScreen(model).possible(a, c)
        for i in range(a.shape[0]):
            found = leader_chain(model, int(a[i]), int(c[i]))
            if found is not None:
                chains += 1
                assert possible[i], (seed, int(a[i]), int(c[i]), found)
            refused += int(not possible[i])
    # the search finds chains, and the screen rules out pairs: both sides are tested
    assert chains > 100
    assert refused > chains


def test_it_refreshes_to_what_a_new_screen_holds() -> None:
    for seed in range(60):
        model = random_model(seed)
        rng = np.random.default_rng(seed)
        screen = ChainScreen(model)
        for _ in range(6):
            # a few leadership changes, kept or rolled back, between refreshes
            model.begin()
            for p in rng.choice(model.n_partitions, 3, replace=False).tolist():
                if model.rf_l[p] > 1:
                    model.move_leader(p, int(rng.integers(1, model.rf_l[p])), "test")
            if rng.random() < 0.3:
                model.rollback()
            else:
                model.commit()
            screen.refresh(model)
            fresh = ChainScreen(model)
            for name in ("give_min", "give_max", "take_min", "take_max", "top", "bottom"):
                assert np.array_equal(getattr(screen, name), getattr(fresh, name)), (seed, name)


def test_it_finds_the_same_first_chain_screened_at_once_or_never() -> None:
    """`_first_chain` switches from plain search to the screen on time alone: both
    ends of that switch must find the same chain (the first pair's that has one)."""
    from apps.balancer.engine.goals.band_leaders import _first_chain, _Screening

    found = 0
    for seed in range(60):
        model = random_model(seed)
        index = model.replicas_by_broker()
        n = model.n_brokers
        pairs = [(a, c) for a in range(n) for c in range(n) if a != c]
        plain = _first_chain(model, pairs, index, _Screening(cost=float("inf")))
        screened = _first_chain(model, pairs, index, _Screening(cost=0.0))
        assert screened == plain, seed
        expected = None
        for a, c in pairs:
            expected = leader_chain(model, a, c, {}, index)
            if expected is not None:
                break
        assert plain == expected, seed
        found += plain is not None
    assert 0 < found < 60


def screened_at_once(screen: ChainScreen, a: np.ndarray, c: np.ndarray) -> np.ndarray:
    """`possible` computed whole from the screen's tables, every pair at once."""
    ok = np.broadcast_to(screen.mid, (a.shape[0], screen.n)).copy()
    ok[np.arange(a.shape[0]), c] = False  # b != c
    for m in screen.varies:
        cur, top, bottom = screen.cur[m], screen.top[m], screen.bottom[m]
        ok &= cur + (screen.give_min[m][a] - screen.take_max[m][c]) <= top
        ok &= cur + (screen.give_max[m][a] - screen.take_min[m][c]) >= bottom
    return ok.any(axis=1)


def some_moves(model: ClusterModel, rng: np.random.Generator, replicas: bool) -> None:
    """A few leadership changes (and, with `replicas`, replica moves and follower
    swaps), kept or rolled back."""
    model.begin()
    for p in rng.choice(model.n_partitions, 3, replace=False).tolist():
        rf = model.rf_l[p]
        if replicas and rng.random() < 0.5:
            outside = np.setdiff1d(np.arange(model.n_brokers), model.assign[p, :rf])
            if outside.shape[0]:
                model.move_replica(p, int(rng.integers(rf)), int(rng.choice(outside)), "test")
        elif replicas and rf > 2 and rng.random() < 0.3:
            model.swap_followers(p, 1, 2, "test")
        elif rf > 1:
            model.move_leader(p, int(rng.integers(1, rf)), "test")
    if rng.random() < 0.3:
        model.rollback()
    else:
        model.commit()


def test_it_refreshes_after_replica_moves_to_what_a_new_screen_holds() -> None:
    for seed in range(60):
        model = random_model(seed)
        rng = np.random.default_rng(seed)
        screen = ChainScreen(model)
        for _ in range(6):
            some_moves(model, rng, replicas=True)
            screen.refresh(model)
            fresh = ChainScreen(model)
            for name in ("give_min", "give_max", "take_min", "take_max", "top", "bottom"):
                assert np.array_equal(getattr(screen, name), getattr(fresh, name)), (seed, name)


def test_it_keeps_each_pairs_answer_across_refreshes_as_a_new_screen_gives_it() -> None:
    """Counts kept from earlier calls, brought up to date by `refresh`, answer as
    the whole computation on a new screen does."""
    differ = 0
    for seed in range(80):
        model = random_model(seed)
        rng = np.random.default_rng(seed)
        n = model.n_brokers
        a, c = (g.ravel() for g in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
        screen = ChainScreen(model)
        for _ in range(6):
            # some pairs asked for (counted and kept), the others not
            some = rng.random(a.shape[0]) < 0.6
            before = screen.possible(a[some], c[some])
            some_moves(model, rng, replicas=rng.random() < 0.3)
            screen.refresh(model)
            expected = screened_at_once(ChainScreen(model), a, c)
            assert np.array_equal(screen.possible(a, c), expected), seed
            differ += int((before != expected[some]).any())
    assert differ > 10  # the moves change answers: the upkeep is tested


def test_it_logs_each_change_of_a_replica_list() -> None:
    for seed in range(30):
        model = random_model(seed)
        rng = np.random.default_rng(seed)
        mark = model.changes_mark()
        start, changes = model.assign.copy(), model._changes
        for _ in range(4):
            some_moves(model, rng, replicas=True)
        logged = model.changed_since(mark)
        assert logged.shape[0] == model._changes - changes  # one entry per change
        differ = np.flatnonzero((start != model.assign).any(axis=1))
        assert set(differ.tolist()) <= set(logged.tolist())
