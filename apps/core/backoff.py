"""Exponential backoff: how long to wait after so many failures in a row."""


def backoff_seconds(*, failures: int, initial: float, cap: float) -> float:
    """Seconds to wait after `failures` failed rounds in a row (0 when none failed)."""
    if failures <= 0:
        return 0.0
    # Bounded exponent: 2**1000 would overflow a float long before the cap applies.
    return float(min(cap, initial * 2 ** min(failures - 1, 32)))
