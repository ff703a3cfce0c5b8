"""Where a band goal's replica step takes replicas from: its sources, most utilised
first, and per source the brokers open to its replicas and the replicas it may give.

Shared by the generic step (band_replicas.py) and the replica-count one
(band_count_replicas.py), which must pick the same sources and candidates.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..model import ClusterModel
from .band_hooks import BandHooks
from .tolerance import tolerance


class StepSources(NamedTuple):
    sources: list[int]  # most utilised first
    stop: np.ndarray  # (B,) what each source gives down to: the band's top, or its middle
    dest_filter: np.ndarray  # (B,) the brokers the step may send to


def step_sources(
    model: ClusterModel,
    *,
    x: np.ndarray,
    norm: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    shed: bool,
) -> StepSources | None:
    """shed: the brokers above the band, sending anywhere the model's mask allows.
    fill: the brokers above the band's middle, sending to brokers below the band.
    None when there is nothing to do."""
    mid = (np.where(np.isfinite(lo), lo, 0.0) + hi) / 2.0
    if shed:
        sources = np.flatnonzero(model.usable & (x > hi + tolerance(hi)))
        stop = hi
        dest_filter = model.usable  # the model's mask knows where each replica may go
    else:
        under = model.dest & (x < lo - tolerance(lo))
        if not under.any():
            return None
        sources = np.flatnonzero(model.usable & np.isfinite(mid) & (x > mid))
        stop = mid
        dest_filter = under
    if sources.shape[0] == 0:
        return None
    sources = sources[np.argsort(-(x[sources] / norm[sources]), kind="stable")]
    return StepSources(sources.tolist(), stop, dest_filter)


def source_open(
    model: ClusterModel,
    *,
    x: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    dest_filter: np.ndarray,
    shed: bool,
) -> tuple[np.ndarray, float] | None:
    """Before each source: the brokers it may send to (filling, those still below the
    band) and the most room any of them has; None when none has room (the step is over)."""
    if not shed:
        dest_filter = model.dest & (x < lo - tolerance(lo))
        if not dest_filter.any():
            return None
    room = np.where(dest_filter & model.dest, hi - x, -np.inf)
    max_room = float(room.max())
    if max_room <= 0:
        return None
    return dest_filter, max_room


def source_candidates(
    goal: BandHooks,
    model: ClusterModel,
    index: object,
    s: int,
    *,
    x: np.ndarray,
    lo: np.ndarray,
    max_room: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source s's replica cells (ps, ks) that may move and fit some room, with their
    weights: those whose leaving keeps s above its floor."""
    ps, ks = model.cells_of(index, s)
    w = goal.weights(model, ps, ks)
    ok = (w > 0) & (w <= max_room) & model.movable[ps, ks] & ~model.frozen[ps]
    if np.isfinite(lo[s]):
        ok &= x[s] - w >= lo[s]
    return ps[ok], ks[ok], w[ok]
