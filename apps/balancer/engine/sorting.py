"""A stable argsort that costs less when no two values are equal."""

from __future__ import annotations

import numpy as np


def stable_argsort(values: np.ndarray) -> np.ndarray:
    """`np.argsort(values, kind="stable")` of a 1-D float array. Without two equal
    values (nor a NaN) the order is the only one, and numpy's default sort finds it
    several times faster than its stable one on a few thousand floats; with them,
    the stable sort."""
    order = np.argsort(values)
    ranked = values[order]
    if ranked.shape[0] > 1 and ((ranked[1:] == ranked[:-1]).any() or np.isnan(ranked[-1])):
        return np.argsort(values, kind="stable")
    return order
