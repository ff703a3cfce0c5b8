"""Log-start and log-end offsets of many partitions: one ListOffsets request per leader."""

from __future__ import annotations

import logging
from collections import defaultdict
from concurrent.futures import Future

import confluent_kafka.admin
from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient
from django.conf import settings

from .partition_leaders import PartitionLeader

logger = logging.getLogger(__name__)


def _timeout() -> float:
    return settings.KAFKA_REQUEST_TIMEOUT


# librdkafka's ListOffsets costs more than linearly in the partitions of one request,
# so a round sends one request per leader and at most this many partitions each: the
# size at which this process's CPU for both specs is lowest; smaller requests cost
# more again (bench/bench_sample_round_live.py; docs/metrics.md).
OFFSETS_REQUEST_PARTITIONS = 100


def _offsets_request_send(*, admin: AdminClient, request: list[TopicPartition]) -> Future:
    """Send one ListOffsets request; its future gives {TopicPartition: answer or KafkaError}.

    This is what AdminClient.list_offsets does below its Python layer: the same
    librdkafka call (one ListOffsets request per leader broker, each partition's
    `offset` field the spec: OFFSET_BEGINNING / OFFSET_END). The layer on top makes,
    sets running and completes one Future per partition and wants one `.result()`
    each, most of a round's own time on a large cluster (docs/metrics.md), so a
    round reads the request's one answer instead. Relies on confluent-kafka's
    `_AdminClientImpl.list_offsets(partitions, future, **kwargs)`, stable since 2.3
    (the version is pinned in requirements.txt; tests/metrics live tests read it).
    """
    future: Future = Future()
    future.set_running_or_notify_cancel()
    # confluent-kafka's own AdminClient class, whatever this module's name is bound to
    # (the test suite's network guard binds it to a subclass).
    super(confluent_kafka.admin.AdminClient, admin).list_offsets(
        request, future, request_timeout=_timeout()
    )
    return future


def log_offsets_list(
    *, admin: AdminClient, partitions: list[PartitionLeader]
) -> tuple[dict[tuple[str, int], int], dict[tuple[str, int], int]]:
    """(log-start, log-end) offsets of the partitions with a leader.

    One ListOffsets request per leader and spec (split past OFFSETS_REQUEST_PARTITIONS),
    all sent before any answer is awaited. A partition whose answer is an error (it
    just lost its leader) is left out this round.
    """
    by_leader: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for p in partitions:
        if p.leader >= 0:
            by_leader[p.leader].append((p.topic, p.partition))
    if not by_leader:
        return {}, {}
    chunks = [
        keys[i : i + OFFSETS_REQUEST_PARTITIONS]
        for keys in by_leader.values()
        for i in range(0, len(keys), OFFSETS_REQUEST_PARTITIONS)
    ]
    futures = [
        [
            _offsets_request_send(
                admin=admin, request=[TopicPartition(topic, index, spec) for topic, index in chunk]
            )
            for chunk in chunks
        ]
        for spec in (OFFSET_BEGINNING, OFFSET_END)
    ]
    result: list[dict[tuple[str, int], int]] = []
    for spec_futures in futures:
        offsets: dict[tuple[str, int], int] = {}
        unanswered = 0
        for future in spec_futures:
            try:
                answer = future.result(_timeout())
            except KafkaException as exc:
                # The request failed as a whole (its leader just went): its partitions
                # are skipped this round, logged at debug like one partition's error.
                logger.debug("list_offsets failed for one leader's partitions: %s", exc)
                continue
            before = len(offsets)
            offsets.update(
                ((tp.topic, tp.partition), info.offset)
                for tp, info in answer.items()
                if type(info) is not KafkaError
            )
            unanswered += len(answer) - (len(offsets) - before)
        if unanswered:
            # Partitions that just lost their leader: skipped this round.
            logger.debug("list_offsets: %d partitions unanswered", unanswered)
        result.append(offsets)
    return result[0], result[1]
