"""The one background producer of the tests and benchmarks: acks=all, idempotent,
counting every acknowledgement."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Producer

from apps.kafka_layer.clients import client_config_build


@dataclass
class AckedProducer:
    """Produces numbered records (key `<partition>-<n>`) with acks=all in a thread, at
    `rate_per_partition` records/s each, and counts the acknowledged ones.

    `acked` keeps each partition's acknowledged keys (to check none is lost) unless
    `keys_kept` is off (a long, fast run); `acked_count` counts them either way.
    `config` adds client settings (e.g. a secured cluster's).
    """

    bootstrap: str
    topic: str
    partitions: int
    rate_per_partition: dict[int, float]
    record_size: int = 1024
    linger_ms: int = 10
    keys_kept: bool = True
    config: dict[str, Any] = field(default_factory=dict)
    acked: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    acked_count: int = 0
    failed: list[str] = field(default_factory=list)
    sent: int = 0
    started: float | None = None  # time.time() of the first record
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @classmethod
    def at_bytes_rate(
        cls, *, bootstrap: str, topic: str, partitions: int, bytes_per_second: float, **kw
    ) -> AckedProducer:
        """`bytes_per_second` in all, spread evenly over the partitions."""
        per_partition = bytes_per_second / kw.get("record_size", 1024) / partitions
        return cls(
            bootstrap=bootstrap,
            topic=topic,
            partitions=partitions,
            rate_per_partition=dict.fromkeys(range(partitions), per_partition),
            **kw,
        )

    def start(self) -> AckedProducer:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def started_wait(self, timeout: float = 30) -> float:
        """time.time() of the first record, once the thread has begun producing."""
        deadline = time.monotonic() + timeout
        while self.started is None:
            assert time.monotonic() < deadline, "the producer did not start"
            time.sleep(0.01)
        return self.started

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(120)

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def _delivered(self, err, msg) -> None:
        if err is not None:
            self.failed.append(str(err))
            return
        self.acked_count += 1
        if self.keys_kept:
            self.acked[msg.partition()].add(msg.key().decode())

    def _run(self) -> None:
        config = client_config_build(bootstrap_servers=self.bootstrap)
        config.update(self.config)
        config.update({"acks": "all", "enable.idempotence": True, "linger.ms": self.linger_ms})
        producer = Producer(config)
        payload = b"v" * self.record_size
        started = time.monotonic()
        self.started = time.time()
        done: dict[int, int] = defaultdict(int)
        # Deterministic rates: each partition gets exactly its due records every tick.
        while not self._stop.is_set():
            elapsed = time.monotonic() - started
            for p, rate in self.rate_per_partition.items():
                due = int(rate * elapsed) - done[p]
                for _ in range(max(due, 0)):
                    key = f"{p}-{done[p]}".encode()
                    while True:
                        try:
                            producer.produce(
                                self.topic,
                                payload,
                                key=key,
                                partition=p,
                                on_delivery=self._delivered,
                            )
                            break
                        except BufferError:
                            producer.poll(0.05)
                    done[p] += 1
                    self.sent += 1
            producer.poll(0)
            time.sleep(0.01)  # the producer's tick: records go out at the rate, not at once
        producer.flush(60)
