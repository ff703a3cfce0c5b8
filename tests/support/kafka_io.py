"""A topic, acks=all records into it and every one of them read back: proof that the
dev cluster serves clients, for the tests that break a node first."""

from __future__ import annotations

import uuid

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from devkit import live
from devkit.polling import wait_until


def round_trip(bootstrap: str, *, records: int = 20, partitions: int = 3) -> list[str]:
    """Create a fresh RF-3 topic, produce `records` keyed records with acks=all, and return
    the keys consumed back from the beginning (in partition order)."""
    topic = f"it-devcluster-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    new = NewTopic(topic, num_partitions=partitions, replication_factor=3)
    admin.create_topics([new])[topic].result(60)
    live.topics_created_wait(admin, [topic], partitions)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    failed: list[str] = []
    for i in range(records):
        producer.produce(
            topic,
            b"v",
            key=f"k{i}".encode(),
            partition=i % partitions,
            on_delivery=lambda err, _msg: failed.append(str(err)) if err else None,
        )
    assert producer.flush(60) == 0 and not failed, failed
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": topic,
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    keys: list[str] = []

    def read_all() -> bool:
        for msg in consumer.consume(100, timeout=1.0):
            if not msg.error():
                keys.append(msg.key().decode())
        return len(keys) >= records

    try:
        wait_until(read_all, 60, 0, what=f"{records} records read back")
    finally:
        consumer.close()
        admin.delete_topics([topic])
    return sorted(keys, key=lambda k: int(k[1:]))
