"""Demo traffic: create a topic and produce to it at a steady rate with a chosen skew.

Used by `manage.py demo_traffic`, `make run` and the integration tests. Records are
produced with acks=all and every acknowledgement is counted, so callers can check
that nothing acked is lost.
"""

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from confluent_kafka import KafkaError, KafkaException, Producer, TopicCollection
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ResourceType,
)

from .clients import client_config_build
from .connection import ConnectionSettings


class TrafficError(ValueError):
    """Bad traffic parameters."""


def rate_parse(text: str) -> float:
    """'5000/s', '5000', '300/m' -> records per second."""
    value, _, unit = text.strip().partition("/")
    seconds = {"": 1, "s": 1, "m": 60, "min": 60, "h": 3600}.get(unit.strip().lower())
    try:
        rate = float(value)
    except ValueError:
        rate = -1.0
    if seconds is None or rate <= 0:
        raise TrafficError(f"invalid rate {text!r}: use e.g. 5000/s")
    return rate / seconds


def skew_weights(spec: str, partitions: int) -> list[float]:
    """Relative share of each partition.

    - ``uniform``: even;
    - ``zipf:S``: partition i gets 1/(i+1)^S;
    - ``hot:K:F``: the first K partitions together get fraction F, the rest share 1-F;
    - ``weights:w0,w1,...``: explicit, one per partition.
    """
    kind, _, arg = spec.partition(":")
    try:
        if kind == "uniform" and not arg:
            return [1.0] * partitions
        if kind == "zipf":
            s = float(arg)
            return [1.0 / (i + 1) ** s for i in range(partitions)]
        if kind == "hot":
            k_text, f_text = arg.split(":")
            k, f = int(k_text), float(f_text)
            if not (0 < k < partitions and 0 < f < 1):
                raise ValueError
            return [f / k] * k + [(1 - f) / (partitions - k)] * (partitions - k)
        if kind == "weights":
            weights = [float(w) for w in arg.split(",")]
            if len(weights) != partitions or min(weights) < 0 or sum(weights) <= 0:
                raise ValueError
            return weights
    except ValueError:
        pass
    raise TrafficError(
        f"invalid skew {spec!r}: use uniform, zipf:S, hot:K:F or weights:w0,w1,... "
        f"({partitions} weights)"
    )


def demo_topic_configs(*, retention_bytes: int, retention_ms: int) -> dict[str, str]:
    """Caps on what a demo topic keeps: per partition, at most `retention_bytes` (plus
    the active segment, kept small so the cap bites) and nothing older than
    `retention_ms`. Without them, a day of demo traffic fills tens of GB."""
    return {
        "retention.bytes": str(retention_bytes),
        "retention.ms": str(retention_ms),
        "segment.bytes": str(min(DEMO_SEGMENT_BYTES, max(retention_bytes // 2, 1024 * 1024))),
    }


DEMO_SEGMENT_BYTES = 8 * 1024 * 1024


def topic_partition_count(*, admin: AdminClient, topic: str, timeout: float) -> int | None:
    """How many partitions `topic` has, None when it does not exist (read without ever
    creating it, whatever the cluster's auto.create.topics.enable)."""
    future = admin.describe_topics(TopicCollection([topic]), request_timeout=timeout)[topic]
    try:
        return len(future.result(timeout=timeout + 5).partitions)
    except KafkaException as exc:
        if exc.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
            return None
        raise


def topic_ensure(
    *,
    admin: AdminClient,
    topic: str,
    partitions: int,
    replication_factor: int,
    timeout: float,
    configs: dict[str, str] | None = None,
) -> bool:
    """Create the topic if missing, with `configs`; an existing topic gets `configs` set
    (the others are left as they are). Returns True when it was created."""
    futures = admin.create_topics(
        [
            NewTopic(
                topic,
                num_partitions=partitions,
                replication_factor=replication_factor,
                config=dict(configs or {}),
            )
        ],
        request_timeout=timeout,
    )
    try:
        futures[topic].result(timeout=timeout + 5)
    except KafkaException as exc:
        if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
            raise
        if configs:
            resource = ConfigResource(
                ResourceType.TOPIC,
                topic,
                incremental_configs=[
                    ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET)
                    for k, v in configs.items()
                ],
            )
            admin.incremental_alter_configs([resource])[resource].result(timeout=timeout + 5)
        return False
    # Metadata propagates asynchronously; wait until every partition has a leader.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        meta = admin.list_topics(topic=topic, timeout=timeout).topics.get(topic)
        if (
            meta
            and len(meta.partitions) == partitions
            and all(p.leader >= 0 for p in meta.partitions.values())
        ):
            break
        time.sleep(0.2)
    return True


@dataclass
class TrafficStats:
    sent: int = 0
    acked: int = 0
    failed: int = 0
    acked_bytes: int = 0
    per_partition_acked: dict[int, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    elapsed: float = 0.0


def traffic_produce(
    *,
    connection: ConnectionSettings,
    topic: str,
    partitions: int,
    rate: float,
    record_size: int,
    weights: list[float],
    duration: float | None,
    seed: int = 0,
    should_stop: Callable[[], bool] = lambda: False,
) -> TrafficStats:
    """Produce `rate` records/s of `record_size` bytes for `duration` s (None: until stopped)."""
    if record_size < 1:
        raise TrafficError("record size must be at least 1 byte")
    if len(weights) != partitions:
        raise TrafficError(f"{len(weights)} skew weights for {partitions} partitions")
    config = client_config_build(
        connection=connection,
        extra={
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 20,
            "compression.type": "none",
        },
    )
    producer = Producer(config)
    stats = TrafficStats()
    rng = random.Random(seed)
    payload = bytes(rng.getrandbits(8) for _ in range(record_size))
    choose = _partition_chooser(rng, weights)

    def on_delivery(err, msg) -> None:
        if err is None:
            stats.acked += 1
            stats.acked_bytes += len(msg.value())
            p = msg.partition()
            stats.per_partition_acked[p] = stats.per_partition_acked.get(p, 0) + 1
        else:
            stats.failed += 1
            if len(stats.errors) < 10:
                stats.errors.append(str(err))

    started = time.monotonic()
    # Send in 10 ms slices so the rate stays smooth at any magnitude.
    tick = 0.01
    while not should_stop():
        now = time.monotonic() - started
        if duration is not None and now >= duration:
            break
        due = int(rate * now) - stats.sent
        for _ in range(max(due, 0)):
            key = str(stats.sent).encode()
            while True:
                try:
                    producer.produce(
                        topic, value=payload, key=key, partition=choose(), on_delivery=on_delivery
                    )
                    break
                except BufferError:
                    producer.poll(0.05)
            stats.sent += 1
        producer.poll(0)
        time.sleep(tick)
    producer.flush(60)
    stats.elapsed = time.monotonic() - started
    return stats


def _partition_chooser(rng: random.Random, weights: list[float]) -> Callable[[], int]:
    population = list(range(len(weights)))
    cumulative = []
    total = 0.0
    for w in weights:
        total += w
        cumulative.append(total)

    def choose() -> int:
        return rng.choices(population, cum_weights=cumulative)[0]

    return choose
