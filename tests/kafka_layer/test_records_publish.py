"""Publishing a round's records in batches: a full local queue waits and sends the rest
in order; a record librdkafka refuses fails the round (the live test checks partitions)."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from apps.kafka_layer import records_publish as publishing
from apps.kafka_layer.connection import ConnectionSettings

RECORDS = [(f"t-{i}".encode(), f"{i}".encode()) for i in range(25)]


class FakeProducer:
    """produce_batch as librdkafka's: queues until its queue is full, marks the rest."""

    def __init__(self, *, room: int, refuse: bytes | None = None) -> None:
        self.room, self.refuse = room, refuse
        self.queued: list[bytes] = []
        self.polls = 0

    def __call__(self, _config: dict) -> FakeProducer:
        return self

    def produce_batch(self, topic, messages, on_delivery=None) -> int:
        queued = 0
        for message in messages:
            assert set(message) == {"key", "value"}  # no error left from a try before
            if message["key"] == self.refuse:
                message["_error"] = KafkaError(KafkaError.MSG_SIZE_TOO_LARGE)
            elif self.room:
                self.room -= 1
                self.queued.append(message["value"])
                queued += 1
            else:
                message["_error"] = KafkaError(KafkaError._QUEUE_FULL)
        return queued

    def poll(self, _timeout: float) -> int:
        self.polls += 1
        self.room += 4  # deliveries drained some of the queue
        return 0

    def flush(self, _timeout: float) -> int:
        return 0


@pytest.fixture
def connection() -> ConnectionSettings:
    return ConnectionSettings(bootstrap_servers="k:9092")


def test_it_waits_for_room_and_sends_the_rest_in_order(monkeypatch, connection):
    producer = FakeProducer(room=3)
    monkeypatch.setattr(publishing, "Producer", producer)
    monkeypatch.setattr(publishing, "PRODUCE_BATCH", 10)

    publishing.records_publish(connection=connection, topic="m", records=RECORDS)

    assert producer.queued == [value for _, value in RECORDS]
    assert producer.polls > 1


def test_it_fails_the_round_on_a_record_refused(monkeypatch, connection):
    producer = FakeProducer(room=100, refuse=b"t-7")
    monkeypatch.setattr(publishing, "Producer", producer)

    with pytest.raises(RuntimeError, match="0 metric records undelivered, 1 failed: .*too large"):
        publishing.records_publish(connection=connection, topic="m", records=RECORDS)
