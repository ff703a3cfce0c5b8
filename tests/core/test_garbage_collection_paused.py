"""Pausing cyclic garbage collection: off inside the block, put back as it was after."""

from __future__ import annotations

import gc

import pytest

from apps.core.garbage_collection import garbage_collection_paused


@pytest.fixture
def collector_restored():
    was_enabled = gc.isenabled()
    yield
    gc.enable() if was_enabled else gc.disable()


def test_it_pauses_the_collector_and_enables_it_again_even_after_an_error(collector_restored):
    gc.enable()
    with pytest.raises(RuntimeError), garbage_collection_paused():
        assert not gc.isenabled()
        raise RuntimeError("round failed")
    assert gc.isenabled()


def test_it_leaves_a_collector_that_was_off_off(collector_restored):
    gc.disable()
    with garbage_collection_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
