"""The replicas beyond the allowed number per rack, on both of rack_violations' ways."""

from __future__ import annotations

from collections import Counter

import numpy as np

from apps.balancer.engine.racks import PAIRWISE_COLUMNS, rack_violations


def _excess(row: list[int], limit: int) -> int:
    """Per rack, its replicas past `limit` (padding, < 0, a rack of one each)."""
    counts = Counter(r for r in row if r >= 0)
    counts.update({("pad", i): 1 for i, r in enumerate(row) if r < 0})
    return sum(max(m - max(limit, 0), 0) for m in counts.values())


def test_rack_violations_count_the_replicas_past_each_racks_limit() -> None:
    rng = np.random.default_rng(8)
    for width in (1, 2, 3, PAIRWISE_COLUMNS, PAIRWISE_COLUMNS + 3):
        for racks in (1, 2, 5):
            cells = rng.integers(0, racks, (200, width))
            cells[rng.random((200, width)) < 0.2] = -1  # padding
            limit = rng.integers(-1, 4, 200)
            got = rack_violations(cells, limit)
            want = [_excess(row, m) for row, m in zip(cells.tolist(), limit.tolist(), strict=True)]
            assert got.tolist() == want
            assert got.dtype == np.int64


def test_rack_violations_of_no_partition_are_none() -> None:
    assert rack_violations(np.zeros((0, 3), dtype=np.int64), np.zeros(0, dtype=np.int64)).shape == (
        0,
    )
