"""Metric records published in batches on the dev cluster: every record delivered, all of
a partition's samples in one partition of the metrics topic, in round order, the very
partition a record-by-record producer picks for the key."""

from __future__ import annotations

import uuid
from collections import defaultdict

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from devkit import live
from devkit.polling import wait_until

from apps.clusters.models import Cluster
from apps.kafka_layer import records_publish as publishing
from apps.kafka_layer.clients import admin_client_create

pytestmark = [pytest.mark.integration]

KEYS = [f"orders-{i}".encode() for i in range(600)]
PARTITIONS = 6  # as the metrics topic (METRICS_TOPIC_PARTITIONS)


def _read_all(bootstrap: str, topic: str, expected: int) -> dict[int, list[tuple[bytes, bytes]]]:
    """(key, value) of every record of the topic's PARTITIONS, in offset order."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"{topic}-reader", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    by_partition: dict[int, list[tuple[bytes, bytes]]] = defaultdict(list)

    def read() -> bool:
        for message in consumer.consume(1000, timeout=1.0):
            assert message.error() is None, message.error()
            by_partition[message.partition()].append((message.key(), message.value()))
        return sum(len(records) for records in by_partition.values()) >= expected

    try:
        wait_until(read, 60, 0, what=f"{expected} records of {topic} read")
    finally:
        consumer.close()
    return by_partition


def test_it_publishes_a_partitions_samples_where_a_plain_producer_would(kafka_cluster, monkeypatch):
    bootstrap = kafka_cluster.bootstrap_servers
    suffix = uuid.uuid4().hex[:8]
    batched, plain = f"it-publish-{suffix}", f"it-publish-{suffix}-plain"
    admin = admin_client_create(bootstrap_servers=bootstrap)
    for name in (batched, plain):
        live.topic_create(admin, name, partitions=PARTITIONS, rf=2)
    # Several batches, one cut mid-key-run.
    monkeypatch.setattr(publishing, "PRODUCE_BATCH", 64)
    cluster = Cluster(name="publish", bootstrap_servers=bootstrap)
    try:
        for round_ in (b"1", b"2"):
            publishing.records_publish(
                connection=cluster.connection,
                topic=batched,
                records=[(key, round_) for key in KEYS],
            )
        producer = Producer({"bootstrap.servers": bootstrap})
        for key in KEYS:
            producer.produce(plain, key=key, value=b"1")
        assert producer.flush(30) == 0

        got = _read_all(bootstrap, batched, 2 * len(KEYS))
        want = _read_all(bootstrap, plain, len(KEYS))
    finally:
        for future in admin.delete_topics([batched, plain]).values():
            future.result(30)

    assert sum(len(records) for records in got.values()) == 2 * len(KEYS)
    plain_partition = {key: p for p, records in want.items() for key, _ in records}
    rounds_by_key: dict[bytes, list[tuple[int, bytes]]] = defaultdict(list)
    for partition, records in got.items():
        for key, round_ in records:
            rounds_by_key[key].append((partition, round_))
    assert set(rounds_by_key) == set(KEYS)
    for key, seen in rounds_by_key.items():
        assert seen == [(plain_partition[key], b"1"), (plain_partition[key], b"2")], key
    assert len(got) > 1  # keys spread over the topic's partitions
