"""Keyed records produced to a topic with every delivery awaited."""

from typing import Any

from confluent_kafka import KafkaError, Producer
from django.conf import settings

from .authorization import KafkaNotAuthorized, authorization_denied, missing_acl_text
from .clients import client_config_build
from .connection import ConnectionSettings


def _timeout() -> float:
    return settings.KAFKA_REQUEST_TIMEOUT


# Records handed to librdkafka per produce_batch call: batches, as one call per record
# costs clearly more CPU, their dicts included (bench/bench_sample_round.py).
PRODUCE_BATCH = 10_000


def records_publish(
    *, connection: ConnectionSettings, topic: str, records: list[tuple[bytes, bytes]]
) -> None:
    """Produce and wait for every record; raise if any was not delivered.

    Keyed records go to the partition the producer's partitioner picks, batched or
    not (checked on the dev cluster), so every sample of a partition still lands in one
    partition of the metrics topic.
    """
    config = client_config_build(
        connection=connection,
        extra={
            "linger.ms": 20,
            "compression.type": "lz4",
            "queue.buffering.max.messages": 1_000_000,
            # Only failures call back into Python: a callback per delivered record
            # adds to the round's CPU for every partition (bench/bench_sample_round.py).
            "delivery.report.only.error": True,
        },
    )
    producer = Producer(config)
    failures: list[str] = []

    def on_delivery(err: KafkaError | None, _msg: Any) -> None:
        if err is not None:
            failures.append(str(err))

    for start in range(0, len(records), PRODUCE_BATCH):
        batch = [
            {"key": key, "value": value} for key, value in records[start : start + PRODUCE_BATCH]
        ]
        while batch:
            if producer.produce_batch(topic, batch, on_delivery=on_delivery) == len(batch):
                break
            # The messages not queued carry their error; those refused for a full local
            # queue go again, in order, once deliveries have drained some.
            again = []
            for message in batch:
                error = message.pop("_error", None)
                if error is None:
                    continue
                if error.code() == KafkaError._QUEUE_FULL:
                    again.append(message)
                else:
                    failures.append(str(error))
            batch = again
            if batch:
                producer.poll(0.1)
    remaining = producer.flush(_timeout() * 3)
    if any(authorization_denied(f) for f in failures):
        raise KafkaNotAuthorized(missing_acl_text(api="Produce", resource=topic))
    if remaining or failures:
        raise RuntimeError(
            f"{remaining} metric records undelivered, {len(failures)} failed"
            + (f": {failures[0]}" if failures else "")
        )
