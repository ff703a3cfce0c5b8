"""The leadership levelling step (goals/leader_levelling.py) picks what a search of
every single change, chain and trade picks, ties included.

Random clusters (fixed seeds) with loads drawn from a few values, so that steps tie
often, bands on the measures a leadership carries, so that some steps break one,
and a few leaderships already changed, so that partitions the plan lists rank first.
"""

from __future__ import annotations

import numpy as np
import pytest

from apps.balancer.engine.goals.leader_chains import TOL, _fits
from apps.balancer.engine.goals.leader_levelling import _best_step
from apps.balancer.engine.goals.tolerance import tolerance
from apps.balancer.engine.measures import LEADER_BYTES_IN, LEADER_MEASURES, NW_OUT
from apps.balancer.engine.model import ClusterModel
from apps.balancer.engine.modes import setup_mode
from apps.balancer.engine.snapshot import parse_snapshot
from tests.support.factories import broker, part, snapshot

LOADS = [1.0, 2.0, 3.0, 5.0, 8.0]


def random_model(seed: int) -> ClusterModel:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 9))
    brokers = [
        broker(b, network_out=float(rng.choice([100.0, 200.0])))
        if rng.random() < 0.5
        else broker(b)
        for b in range(1, n + 1)
    ]
    parts = []
    for i in range(int(rng.integers(20, 60))):
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
    model = ClusterModel(
        parsed, setup_mode(parsed, "full", []), capacity_threshold=0.8, max_replicas_per_broker=0
    )
    model.open_leadership()
    for j in LEADER_MEASURES:
        x = model.load[:, j]
        hi = np.where(rng.random(n) < 0.25, np.inf, x * rng.choice([1.0, 1.05, 1.5], n))
        model.tighten(j, x * rng.choice([0.0, 0.9], n), hi)
    for p in rng.choice(model.n_partitions, 4, replace=False).tolist():
        if model.rf_l[p] > 1:
            model.move_leader(p, 1, "test")
    return model


def every_step(model: ClusterModel, j: int, a: int, lo: np.ndarray) -> list[tuple[int, int]] | None:
    """The module docstring's search, one step at a time: the least (utilisation
    left on the touched brokers, partitions newly listed, -1 for a single change or
    else the middle broker, then the order of the gives and takes)."""
    x, norm, lvec = model.load[:, j].tolist(), model.norm[:, j].tolist(), model.lvec
    start = x[a] / norm[a]
    below = start - abs(start) * TOL - TOL
    floor = (
        np.minimum(lo, model.load[:, j]) - tolerance(np.minimum(lo, model.load[:, j]))
    ).tolist()

    def fresh(p: int) -> int:
        return int((model.assign[p] == model.initial[p]).all())

    def follows(b: int) -> list[tuple[int, int, int]]:
        out = []
        for p in model.led_by(b).tolist():
            if model.frozen[p] or not model.leader_movable[p] or lvec[p, j] <= 0:
                continue
            for k in range(1, model.rf_l[p]):
                c = int(model.assign[p, k])
                if c >= 0 and model.usable[c] and model.leader_dest[c]:
                    out.append((p, k, c))
        return out

    steps = []
    gives = [g for g in follows(a) if _fits(model, a, -lvec[g[0]])]
    for n1, (p, k, b) in enumerate(gives):
        wa = float(lvec[p, j])
        score = max((x[a] - wa) / norm[a], (x[b] + wa) / norm[b])
        if score < below and x[a] - wa >= floor[a] and _fits(model, b, lvec[p]):
            steps.append(((score, fresh(p), -1, n1, 0), [(p, k)]))
        for n2, (q, kq, c) in enumerate(follows(b)):
            wb = float(lvec[q, j])
            trade = c == a
            xa = x[a] - wa + (wb if trade else 0.0)
            xb = x[b] + wa - wb
            score = max(xa / norm[a], xb / norm[b], -np.inf if trade else (x[c] + wb) / norm[c])
            if c == b or not (score < below and xa >= floor[a] and xb >= floor[b]):
                continue
            fit = _fits(model, a, -lvec[p] + (lvec[q] if trade else 0.0))
            fit = fit and _fits(model, b, lvec[p] - lvec[q]) and (trade or _fits(model, c, lvec[q]))
            if fit:
                steps.append(((score, fresh(p) + fresh(q), b, n1, n2), [(p, k), (q, kq)]))
    return min(steps)[1] if steps else None


@pytest.mark.parametrize("seed", range(40))
def test_best_step_is_the_least_of_every_step(seed: int) -> None:
    model = random_model(seed)
    rng = np.random.default_rng(seed)
    for j in (NW_OUT, LEADER_BYTES_IN):
        lo = model.load[:, j] * rng.choice([0.0, 0.5, 0.95], model.n_brokers)
        for a in range(model.n_brokers):
            assert _best_step(model, j, a, lo) == every_step(model, j, a, lo), (j, a)
