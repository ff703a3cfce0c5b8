"""The slack within which float noise never counts as a band violation."""

from __future__ import annotations

import numpy as np


def tolerance(x: np.ndarray) -> np.ndarray:
    # relative slack so that float noise never counts as a violation
    return np.abs(x) * 1e-9 + 1e-9
