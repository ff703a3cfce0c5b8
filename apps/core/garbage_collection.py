"""Pausing Python's cyclic garbage collector around work that allocates many objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def garbage_collection_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block (usable as a decorator too).

    For work that makes many objects, none in a cycle: reference counting frees them
    all, but each of Python's full collections walks every live object, and many
    allocations trigger many of them; with a large snapshot alive they can cost more
    than the work itself. Whatever cycles are left are collected once the collector is
    back on; a collector that was off stays off.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
