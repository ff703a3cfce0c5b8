"""stable_argsort: numpy's stable argsort, whether or not values repeat."""

from __future__ import annotations

import numpy as np

from apps.balancer.engine.sorting import stable_argsort


def test_stable_argsort_is_numpys_stable_argsort() -> None:
    rng = np.random.default_rng(9)
    for n in (0, 1, 2, 50, 3000):
        for values in (
            rng.random(n),  # distinct
            rng.integers(0, 5, n).astype(np.float64),  # ties
            -rng.integers(0, 3, n) * 1e9,  # ties, descending as the goals ask
            np.where(rng.random(n) < 0.1, np.nan, rng.random(n)),  # NaN
            np.where(rng.random(n) < 0.5, -0.0, 0.0),  # equal, of two signs
        ):
            got = stable_argsort(values)
            assert got.tolist() == np.argsort(values, kind="stable").tolist()
