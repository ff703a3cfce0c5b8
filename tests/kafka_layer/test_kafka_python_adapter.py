"""kafka-python's admin client against an unreachable cluster: a failed open leaves
nothing running (kafka-python 3.0.12 would leave its IO thread behind)."""

import gc
import logging
import threading
import weakref

import pytest
from kafka.errors import KafkaError

from apps.kafka_layer.kafka_python_adapter import admin_client_open, replica_sizes_describe


def _io_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("kafka-io-")]


class _Held:
    """Stands for what a caller's frame holds while the open fails (a confluent-kafka
    client, say): it must be freed with the frame."""


def test_it_stops_the_io_thread_of_a_client_that_could_not_bootstrap(settings):
    settings.KAFKA_CONNECT_TIMEOUT = 0.5
    before = set(_io_threads())

    with pytest.raises(KafkaError), admin_client_open(bootstrap_servers="127.0.0.1:1"):
        pass  # nothing listens there

    assert set(_io_threads()) == before


def test_it_lets_go_of_the_callers_frames_after_a_failed_request(settings, monkeypatch):
    settings.KAFKA_CONNECT_TIMEOUT = 0.5
    # pytest keeps every log record of the test, and "Bootstrap failed" holds the exception.
    monkeypatch.setattr(logging.getLogger("kafka.net.manager"), "disabled", True)

    refs: list[weakref.ref[_Held]] = []

    def caller() -> None:
        held = _Held()  # kept alive by this frame only
        refs.append(weakref.ref(held))
        replica_sizes_describe(bootstrap_servers="127.0.0.1:1")

    with pytest.raises(KafkaError):
        caller()
    gc.collect()

    # A weak reference, not a scan of gc.get_objects(): isinstance() on a dead weakproxy
    # another test left in the heap raises ReferenceError.
    assert refs[0]() is None
