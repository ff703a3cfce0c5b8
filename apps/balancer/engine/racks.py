"""Racks: each broker's rack code, a partition's replicas allowed per rack, the excess."""

from __future__ import annotations

import numpy as np

PAIRWISE_COLUMNS = 8  # up to this many columns, comparing pairs costs less than a sort


def rack_codes(racks: list[str | None]) -> tuple[np.ndarray, int]:
    """A code per broker, in broker order, with the number of codes. A broker
    without rack is a rack of its own (as Cruise Control does)."""
    codes: dict[str, int] = {}
    rack = np.zeros(len(racks), dtype=np.int64)
    nxt = 0
    for b, name in enumerate(racks):
        if name is None:
            rack[b] = nxt
            nxt += 1
        else:
            if name not in codes:
                codes[name] = nxt
                nxt += 1
            rack[b] = codes[name]
    return rack, nxt


def rack_limits(rf: np.ndarray, n_racks: int) -> np.ndarray:
    """Replicas of one partition allowed per rack, given the usable racks."""
    nr = max(n_racks, 1)
    # replicas of one partition on distinct racks while racks >= rf, else as even as
    # the racks allow: at most ceil(rf / racks) per rack
    return np.where(nr >= rf, 1, -(-rf // nr)).astype(np.int64)


def rack_violations(rack_of_cell: np.ndarray, rack_max: np.ndarray) -> np.ndarray:
    """Per-partition count of replicas beyond the allowed number per rack.

    rack_of_cell: (P, K) rack code per replica, negative for padding.
    """
    if rack_of_cell.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    k = rack_of_cell.shape[1]
    # padding gets distinct sentinels so that it never forms a run
    pad = -(np.arange(k, dtype=np.int64) + 1)
    vals = np.where(rack_of_cell >= 0, rack_of_cell.astype(np.int64), pad[None, :])
    if k <= PAIRWISE_COLUMNS:
        return _excess_pairwise(vals, rack_max)
    s = np.sort(vals, axis=1)
    run = np.zeros(s.shape, dtype=np.int64)
    for i in range(1, k):
        run[:, i] = np.where(s[:, i] == s[:, i - 1], run[:, i - 1] + 1, 0)
    return (run >= rack_max[:, None]).sum(axis=1)


def _excess_pairwise(vals: np.ndarray, rack_max: np.ndarray) -> np.ndarray:
    """`rack_violations` of the codes `vals` (padding distinct) without a sort: the
    i-th cell of a rack has i - 1 cells of it before it, in any order of the cells,
    as it has in a sorted run; so each cell counts when the cells of its rack before
    it, column by column, reach the limit."""
    excess = (rack_max <= 0).astype(np.int64)  # the first cell: none before it
    for i in range(1, vals.shape[1]):
        before = (vals[:, i] == vals[:, 0]).astype(np.int64)
        for j in range(1, i):
            before += vals[:, i] == vals[:, j]
        excess += before >= rack_max
    return excess
