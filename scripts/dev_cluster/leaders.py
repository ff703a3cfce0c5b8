"""Preferred leader election: each partition led by its first replica again once that
replica is back in sync, so a restarted broker does not leave another leading everything."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .metadata import admin_client

# Kafka's own rebalance (auto.leader.rebalance.enable) waits up to 5 minutes; we don't.
ELECTION_TIMEOUT_S = 60.0
BATCH = 1000  # partitions per ElectLeaders request


@dataclass(frozen=True)
class ElectionResult:
    elected: int  # partitions handed back to their preferred replica
    pending: int  # partitions whose running preferred replica still does not lead


def _not_preferred(admin, running: set[int]) -> tuple[list[tuple[str, int]], int]:
    """(partitions ready for an election, partitions not led by a running preferred replica)."""
    md = admin.list_topics(timeout=30)
    ready, waiting = [], 0
    for name, topic in md.topics.items():
        for pid, part in topic.partitions.items():
            if not part.replicas or part.replicas[0] not in running:
                continue
            if part.leader == part.replicas[0]:
                continue
            waiting += 1
            if part.replicas[0] in part.isrs:
                ready.append((name, pid))
    return ready, waiting


def preferred_leaders_elect(
    bootstrap_servers: str,
    running_brokers: Iterable[int],
    timeout: float = ELECTION_TIMEOUT_S,
    security: Mapping[str, Any] | None = None,
) -> ElectionResult:
    """Elect preferred leaders wherever the preferred replica runs and is in sync.

    A just-restarted broker rejoins each partition's ISR as it catches up, so this polls
    until no partition with a running preferred replica is led by another, or timeout.
    `security`: client settings of a principal allowed to see every topic and elect
    (admin_client); with ACLs on, the anonymous PLAINTEXT principal sees no topic.
    """
    from confluent_kafka import ElectionType, KafkaException, TopicPartition

    admin = admin_client(bootstrap_servers, security)
    running = set(running_brokers)
    deadline = time.monotonic() + timeout
    elected = 0
    while True:
        try:
            ready, waiting = _not_preferred(admin, running)
        except KafkaException:
            ready, waiting = [], -1  # metadata unavailable for a moment: try again
        if waiting == 0:
            return ElectionResult(elected, 0)
        for start in range(0, len(ready), BATCH):
            chunk = [TopicPartition(t, p) for t, p in ready[start : start + BATCH]]
            try:
                result = admin.elect_leaders(ElectionType.PREFERRED, chunk).result(timeout=60)
            except KafkaException:
                continue  # e.g. the controller moved; the next round retries
            elected += sum(1 for err in result.values() if err is None)
        if time.monotonic() > deadline:
            return ElectionResult(elected, max(waiting, 0))
        time.sleep(0.5)
