"""The canary: a small topic with one partition led by each broker, and an acks=all
producer and a consumer that time what a client of each broker feels.

`canary_topic_ensure` keeps the placement as brokers come and go (a partition for a new
broker, a preferred election for a partition its broker lost); `CanaryProbe` writes a
few records to every partition and reads them back, and says per leading broker how
long each write took to be acknowledged by every in-sync replica (produce) and to reach
a consumer (end to end), and how many failed.
"""

from __future__ import annotations

import logging
import struct
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from confluent_kafka import (
    OFFSET_END,
    Consumer,
    ElectionType,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic
from confluent_kafka.error import KafkaError as KafkaErrorType

from .authorization import KafkaNotAuthorized, authorization_denied, missing_acl_text
from .clients import client_config_build, client_timeouts
from .connection import ConnectionSettings

logger = logging.getLogger(__name__)

# A record's value: the probe it belongs to (16 bytes) and when it was sent (ns, monotonic
# clock of this process; the consumer is in the same process).
_VALUE = struct.Struct(">16sq")


def _timeout() -> float:
    return client_timeouts().request


def _replicas_for(broker: int, brokers: list[int]) -> list[int]:
    """`broker` first (the preferred leader), then the next broker as its follower, so an
    acks=all write crosses the network like the cluster's own traffic."""
    if len(brokers) < 2:
        return [broker]
    after = brokers[(brokers.index(broker) + 1) % len(brokers)]
    return [broker, after]


def canary_topic_ensure(
    *, admin: AdminClient, topic: str, brokers: Iterable[int]
) -> dict[int, int]:
    """Make every broker in `brokers` (alive ones) lead a partition of `topic`; answer
    {broker: partition} for the brokers that lead one now.

    Missing topic: created with one partition per broker. A broker with no partition
    preferring it (a new broker): a partition added for it. A broker that prefers a
    partition but does not lead it (it came back after a restart): a preferred election
    for that partition, which takes effect by the next round.
    """
    alive = sorted(set(brokers))
    if not alive:
        return {}
    try:
        return _ensure(admin=admin, topic=topic, brokers=alive)
    except KafkaException as exc:
        if authorization_denied(exc):
            raise KafkaNotAuthorized(
                missing_acl_text(api="CreateTopics/CreatePartitions", resource=topic)
            ) from exc
        raise


def _ensure(*, admin: AdminClient, topic: str, brokers: list[int]) -> dict[int, int]:
    meta = admin.list_topics(topic=topic, timeout=_timeout()).topics.get(topic)
    if meta is None or meta.error is not None and not meta.partitions:
        new = NewTopic(
            topic,
            num_partitions=len(brokers),
            replica_assignment=[_replicas_for(b, brokers) for b in brokers],
            config={"cleanup.policy": "delete", "retention.ms": str(3600 * 1000)},
        )
        try:
            admin.create_topics([new], request_timeout=_timeout())[topic].result(_timeout())
            logger.info("created canary topic %s over brokers %s", topic, brokers)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise
        return {}  # leaders known from the next round's metadata
    preferred = {p.replicas[0]: p.id for p in meta.partitions.values() if p.replicas}
    leading = {p.leader: p.id for p in meta.partitions.values() if p.leader in brokers}
    missing = [b for b in brokers if b not in preferred]
    if missing:
        total = len(meta.partitions) + len(missing)
        grow = NewPartitions(topic, total, [_replicas_for(b, brokers) for b in missing])
        admin.create_partitions([grow], request_timeout=_timeout())[topic].result(_timeout())
        logger.info("canary topic %s: partitions added for brokers %s", topic, missing)
    astray = [
        TopicPartition(topic, preferred[b]) for b in brokers if b in preferred and b not in leading
    ]
    if astray:
        _elect_preferred(admin=admin, partitions=astray)
    return {b: p for b, p in leading.items() if preferred.get(b) == p}


def canary_partition_replicas(*, admin: AdminClient, topic: str) -> dict[int, list[int]]:
    """{partition: replica broker ids} of the canary topic, as the metadata says now."""
    meta = admin.list_topics(topic=topic, timeout=_timeout()).topics.get(topic)
    if meta is None:
        return {}
    return {p.id: list(p.replicas) for p in meta.partitions.values()}


def _elect_preferred(*, admin: AdminClient, partitions: list[TopicPartition]) -> None:
    try:
        admin.elect_leaders(ElectionType.PREFERRED, partitions).result(_timeout())
    except KafkaException as exc:  # e.g. the preferred broker is not in sync yet
        logger.debug("canary preferred election: %s", exc)


@dataclass
class BrokerProbe:
    """What one round measured on the partition one broker leads."""

    sent: int = 0
    acked: int = 0
    received: int = 0
    errors: int = 0
    produce_ms: list[float] = field(default_factory=list)
    end_to_end_ms: list[float] = field(default_factory=list)
    last_error: str = ""


class CanaryProbe:
    """An acks=all producer and a consumer of one cluster's canary topic, kept between
    rounds (a connection per round would time the handshake, not the cluster)."""

    def __init__(self, *, connection: ConnectionSettings, topic: str) -> None:
        self.topic = topic
        timeouts = client_timeouts()
        self._producer = Producer(
            client_config_build(
                connection=connection,
                extra={
                    "acks": "all",
                    "enable.idempotence": False,
                    "linger.ms": 0,
                    "retries": 0,  # a failed write is an error to count, not to hide
                    "message.timeout.ms": int(timeouts.request * 1000),
                },
            )
        )
        self._consumer = Consumer(
            client_config_build(
                connection=connection,
                extra={
                    "group.id": f"balancer-canary-{uuid.uuid4().hex[:8]}",
                    "enable.auto.commit": False,
                    "fetch.wait.max.ms": 10,
                    "fetch.min.bytes": 1,
                },
            )
        )
        self._assigned: set[int] = set()

    def close(self) -> None:
        self._consumer.close()
        self._producer.flush(0)

    def _assign(self, partitions: Iterable[int]) -> None:
        wanted = set(partitions)
        if wanted - self._assigned:
            self._assigned |= wanted
            self._consumer.assign(
                [TopicPartition(self.topic, p, OFFSET_END) for p in sorted(self._assigned)]
            )

    def probe(
        self, *, leaders: dict[int, int], records: int, timeout: float
    ) -> dict[int, BrokerProbe]:
        """Write `records` records to each broker's partition ({broker: partition}), then
        read them back, for at most `timeout` seconds; per broker what happened."""
        self._assign(leaders.values())
        by_partition = {p: b for b, p in leaders.items()}
        results = {b: BrokerProbe() for b in leaders}
        probe_id = uuid.uuid4().bytes
        sent_at: dict[tuple[int, int], int] = {}

        def delivered(err: KafkaErrorType | None, msg, broker: int, seq: int) -> None:
            result = results[broker]
            if err is not None:
                result.errors += 1
                result.last_error = err.str()
                return
            result.acked += 1
            # librdkafka's own produce-to-acknowledgement time: the callback runs only
            # when this thread polls, which may be a consume() wait later
            latency = msg.latency()
            if latency is None:
                latency = (time.monotonic_ns() - sent_at[broker, seq]) / 1e9
            result.produce_ms.append(latency * 1000.0)

        for seq in range(records):
            for broker, partition in leaders.items():
                now = time.monotonic_ns()
                sent_at[broker, seq] = now
                results[broker].sent += 1
                self._producer.produce(
                    self.topic,
                    value=_VALUE.pack(probe_id, now),
                    partition=partition,
                    on_delivery=lambda err, msg, b=broker, s=seq: delivered(err, msg, b, s),
                )
            self._producer.poll(0)
        deadline = time.monotonic() + timeout
        expected = records * len(leaders)
        received = 0
        while time.monotonic() < deadline and (received < expected or len(self._producer) > 0):
            self._producer.poll(0)
            for msg in self._consumer.consume(num_messages=500, timeout=0.05):
                if msg.error() is not None or len(msg.value() or b"") != _VALUE.size:
                    continue
                got_id, sent_ns = _VALUE.unpack(msg.value())
                broker = by_partition.get(msg.partition())
                if got_id != probe_id or broker is None:
                    continue  # a record of an earlier round, late
                results[broker].received += 1
                results[broker].end_to_end_ms.append((time.monotonic_ns() - sent_ns) / 1e6)
                received += 1
        self._producer.flush(0)
        for result in results.values():
            unanswered = result.sent - result.acked - result.errors
            if unanswered:  # neither acknowledged nor refused within the round
                result.errors += unanswered
                result.last_error = result.last_error or "no acknowledgement in time"
        return results
