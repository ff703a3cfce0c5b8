"""The traffic every fault case runs alongside: an acks=all producer (devkit/producer.py
AckedProducer) and a consumer reading the same topic as it is written, so a case can
count records acked, read back and lost."""

import threading
import uuid
from collections import defaultdict
from dataclasses import dataclass, field

from confluent_kafka import Consumer, TopicPartition
from devkit.polling import wait_until
from devkit.producer import AckedProducer

from apps.kafka_layer.clients import client_config_build


@dataclass
class LiveConsumer:
    """Reads every keyed record of `topic` from the start, in a thread, until stopped."""

    bootstrap: str
    topic: str
    partitions: int
    keys: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    duplicates: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> "LiveConsumer":
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(30)

    @property
    def read_count(self) -> int:
        return sum(len(k) for k in self.keys.values())

    def _run(self) -> None:
        config = client_config_build(bootstrap_servers=self.bootstrap)
        config.update(
            {
                "group.id": f"it-faults-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
            }
        )
        consumer = Consumer(config)
        consumer.assign([TopicPartition(self.topic, p, 0) for p in range(self.partitions)])
        try:
            while not self._stop.is_set():
                for msg in consumer.consume(500, timeout=0.5):
                    if msg.error() or msg.key() is None:
                        continue  # errors are retried by librdkafka; unkeyed: fill data
                    key = msg.key().decode()
                    seen = self.keys[msg.partition()]
                    if key in seen:
                        self.duplicates += 1
                    seen.add(key)
        finally:
            consumer.close()


@dataclass
class Traffic:
    producer: AckedProducer
    consumer: LiveConsumer

    @classmethod
    def start(cls, bootstrap: str, topic: str, partitions: int, rate: float = 20.0) -> "Traffic":
        producer = AckedProducer(
            bootstrap=bootstrap,
            topic=topic,
            partitions=partitions,
            rate_per_partition=dict.fromkeys(range(partitions), rate),
        ).start()
        consumer = LiveConsumer(bootstrap=bootstrap, topic=topic, partitions=partitions).start()
        wait_until(lambda: consumer.read_count, 60, what="the first records read back")
        return cls(producer=producer, consumer=consumer)

    def acked_since(self, count: int, timeout: float = 60) -> None:
        """Wait until more records than `count` are acked: the producer survived."""
        wait_until(lambda: self.producer.acked_count > count, timeout, what="records acked")

    def finish(self, timeout: float = 120) -> dict[str, int]:
        """Stop producing, let the consumer catch up on every acked record, and count."""
        self.producer.stop()

        def caught_up() -> bool:
            return all(
                keys <= self.consumer.keys[p] for p, keys in list(self.producer.acked.items())
            )

        try:
            wait_until(caught_up, timeout, what="every acked record read back")
        except AssertionError:
            pass  # counted as lost below
        self.consumer.stop()
        acked = self.producer.acked_count
        lost = sum(
            len(keys - self.consumer.keys[p]) for p, keys in list(self.producer.acked.items())
        )
        return {"acked": acked, "read": self.consumer.read_count, "lost": lost}
