"""Wait for a condition instead of sleeping a guessed number of seconds."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T],
    timeout: float,
    interval: float = 0.5,
    *,
    what: str = "condition",
    retry_on: tuple[type[Exception], ...] = (),
) -> T:
    """Call `condition` every `interval` s until it returns something truthy; return that.

    An exception in `retry_on` counts as "not yet" (e.g. a broker that does not know a
    new leader for a moment). Fails naming `what` once `timeout` s have passed.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = condition()
        except retry_on:
            if time.monotonic() > deadline:
                raise
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        time.sleep(interval)
