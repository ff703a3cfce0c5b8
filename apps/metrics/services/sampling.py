"""Sampling: one round reads every partition's offsets, replica sizes and consumer
progress from a cluster and publishes one record per partition to the metrics topic.

See docs/metrics.md for the record schema and the requests a round makes.
"""

from __future__ import annotations

import gc
import logging
import time
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

import confluent_kafka.admin
from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic
from django.conf import settings

from apps.clusters.authorization import authorization_denied, missing_acl_text
from apps.clusters.kafka_clients import admin_client_create, client_config_build
from apps.clusters.models import Cluster

logger = logging.getLogger(__name__)


def _timeout() -> float:
    return settings.KAFKA_REQUEST_TIMEOUT


class PartitionInfo(NamedTuple):
    """One per partition and round: a tuple, as a frozen dataclass costs 4x to create."""

    topic: str
    partition: int
    leader: int
    replicas: list[int]


@dataclass(frozen=True)
class SampleResult:
    ts_ms: int
    partitions: int
    records: int
    consumer_groups: int
    sizes_known: bool
    seconds: float
    # Why DescribeLogDirs failed this round (sizes then come from offsets), else "".
    sizes_error: str = ""


@contextmanager
def garbage_collection_paused() -> Iterator[None]:
    """No cyclic garbage collection while a round runs.

    A round makes a few objects per partition (metadata, offsets, sizes, records),
    none in a cycle, so reference counting frees them all; but each of Python's full
    collections walks every live object, and a round's allocations trigger many:
    at 200k partitions they took 7 of a round's 11 s of CPU (bench_sample_round.py).
    Whatever cycles are left are collected once the collector is back on.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class SampleNotAuthorized(Exception):
    """The principal lacks an ACL the sampler needs; the message names it."""


def metrics_topic_ensure(
    *, admin: AdminClient, topic: str, existing: set[str], brokers: int
) -> None:
    """Create the metrics topic if missing: time retention, min(3, `brokers`) replicas.

    `brokers` counts the alive brokers, so a small or degraded cluster gets a topic
    it can hold fully replicated. A drain that leaves fewer brokers than its replicas
    lowers its RF (plans.services.drain_fit), so it never blocks one.
    """
    if topic in existing:
        return
    new = NewTopic(
        topic,
        num_partitions=settings.METRICS_TOPIC_PARTITIONS,
        replication_factor=max(1, min(3, brokers)),
        config={
            "cleanup.policy": "delete",
            "retention.ms": str(settings.METRICS_TOPIC_RETENTION_MS),
        },
    )
    try:
        admin.create_topics([new], request_timeout=_timeout())[topic].result(_timeout())
    except KafkaException as exc:
        if authorization_denied(exc):
            raise SampleNotAuthorized(missing_acl_text(api="CreateTopics", resource=topic)) from exc
        if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
            raise
    logger.info("created metrics topic %s", topic)


def partitions_describe(*, admin: AdminClient) -> tuple[list[PartitionInfo], set[str], int]:
    """(partitions with a leader, every topic name, live broker count) from one metadata request."""
    md = admin.list_topics(timeout=_timeout())
    partitions: list[PartitionInfo] = []
    for name, topic in md.topics.items():
        if topic.error is not None:
            continue
        for index, p in topic.partitions.items():
            # librdkafka builds fresh metadata objects per call: no copy needed.
            partitions.append(PartitionInfo(name, index, p.leader, p.replicas))
    return partitions, set(md.topics), len(md.brokers)


# librdkafka's ListOffsets costs more than linearly in the partitions of one request
# (on the dev cluster, 1,000 partitions of one leader: 24 ms of CPU in one request,
# 16 ms in requests of 500, 13 ms of 250), so a round sends one request per leader
# and at most this many partitions each. Both specs at 20k partitions (RF 2, topics
# of 25), this process's CPU: 0.26 s at 500, 0.22 at 200, 0.20 at 100, 0.24 at 50
# (bench/bench_sample_round_live.py; docs/metrics.md).
OFFSETS_REQUEST_PARTITIONS = 100


def _offsets_request_send(*, admin: AdminClient, request: list[TopicPartition]) -> Future:
    """Send one ListOffsets request; its future gives {TopicPartition: answer or KafkaError}.

    This is what AdminClient.list_offsets does below its Python layer: the same
    librdkafka call (one ListOffsets request per leader broker, each partition's
    `offset` field the spec: OFFSET_BEGINNING / OFFSET_END). The layer on top makes,
    sets running and completes one Future per partition and wants one `.result()`
    each, two thirds of a round's own time at 200k partitions (docs/metrics.md), so a
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
    *, admin: AdminClient, partitions: list[PartitionInfo]
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
                # are skipped this round, logged at debug as a partition's error was.
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


def committed_offsets_list(*, admin: AdminClient) -> dict[tuple[str, int], dict[str, int]]:
    """{(topic, partition): {group: committed offset}} for every consumer group.

    OffsetFetch is one request per group (librdkafka takes one group per call);
    they are all sent before any answer is awaited.
    """
    listing = admin.list_consumer_groups(request_timeout=_timeout()).result(_timeout())
    group_ids = sorted(g.group_id for g in listing.valid)
    futures = {
        group_id: admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group_id)], request_timeout=_timeout()
        )[group_id]
        for group_id in group_ids
    }
    committed: dict[tuple[str, int], dict[str, int]] = defaultdict(dict)
    for group_id, future in futures.items():
        try:
            answer = future.result(_timeout())
        except KafkaException as exc:
            logger.warning("offsets of group %s: %s", group_id, exc)
            continue
        for tp in answer.topic_partitions or []:
            if tp.error is None and tp.offset >= 0:
                committed[(tp.topic, tp.partition)][group_id] = tp.offset
    return committed


def replica_sizes_read(
    *, cluster: Cluster, errors: list[str] | None = None
) -> dict[int, dict[tuple[str, int], int]] | None:
    """{broker: {(topic, partition): size}}, or None when DescribeLogDirs failed (the job
    then uses offsets).

    Why it failed is appended to `errors`: the sample round warns once when that
    starts (sample_round), not every round.
    """
    from apps.clusters.kafka_python_adapter import log_sizes_describe

    try:
        return log_sizes_describe(connection=cluster.connection)
    except Exception as exc:  # kafka-python raises many unrelated types
        logger.debug("describe_log_dirs on %s failed: %s", cluster.name, exc)
        if errors is not None:
            if authorization_denied(exc):
                errors.append(missing_acl_text(api="DescribeLogDirs"))
            else:
                errors.append(f"{exc.__class__.__name__}: {exc}".rstrip(": "))
        return None


def metric_records_build(
    *,
    ts_ms: int,
    partitions: list[PartitionInfo],
    start_offsets: dict[tuple[str, int], int],
    end_offsets: dict[tuple[str, int], int],
    sizes: dict[int, dict[tuple[str, int], int]] | None,
    committed: dict[tuple[str, int], dict[str, int]],
) -> list[tuple[bytes, bytes]]:
    """(key, value) per partition whose offsets are known, in the schema of metrics_schema.

    `sizes` is by broker (replica_sizes_read); None: no sizes in the records.
    """
    # metrics_schema imports pyspark: kept out of processes that import services only.
    from spark_jobs.metrics_schema import metric_records_encode

    no_groups: dict[str, int] = {}
    rows = []
    for p in partitions:
        tp = (p.topic, p.partition)
        start = start_offsets.get(tp)
        end = end_offsets.get(tp)
        if start is None or end is None:
            continue
        rows.append(
            (p.topic, p.partition, p.leader, p.replicas, start, end, committed.get(tp, no_groups))
        )
    return metric_records_encode(ts_ms=ts_ms, rows=rows, sizes=sizes or {})


# Records handed to librdkafka per produce_batch call: one call per record cost 0.2 s
# of CPU at 200k partitions, batches of 10k 0.12-0.13 s, their dicts included
# (bench/bench_sample_round.py).
PRODUCE_BATCH = 10_000


def metric_records_publish(
    *, cluster: Cluster, topic: str, records: list[tuple[bytes, bytes]]
) -> None:
    """Produce and wait for every record; raise if any was not delivered.

    Keyed records go to the partition the producer's partitioner picks, batched or
    not (checked on the dev cluster), so every sample of a partition still lands in one
    partition of the metrics topic.
    """
    config = client_config_build(
        connection=cluster.connection,
        extra={
            "linger.ms": 20,
            "compression.type": "lz4",
            "queue.buffering.max.messages": 1_000_000,
            # Only failures call back into Python: a callback per delivered record was
            # ~0.5 us each of the round's CPU (0.1 s at 200k partitions).
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
        raise SampleNotAuthorized(missing_acl_text(api="Produce", resource=topic))
    if remaining or failures:
        raise RuntimeError(
            f"{remaining} metric records undelivered, {len(failures)} failed"
            + (f": {failures[0]}" if failures else "")
        )


def metrics_sample(*, cluster: Cluster, admin: AdminClient | None = None) -> SampleResult:
    """One sample round: read every partition's offsets, sizes and consumer progress and
    publish one record per partition to the metrics topic.

    The round is flushed before returning, so a record of a later round never
    becomes visible before one of this round (the aggregation relies on it).
    """
    started = time.monotonic()
    with garbage_collection_paused():
        admin = admin or admin_client_create(connection=cluster.connection)
        topic = settings.METRICS_TOPIC
        partitions, existing, brokers = partitions_describe(admin=admin)
        metrics_topic_ensure(admin=admin, topic=topic, existing=existing, brokers=brokers)
        # One timestamp per round; the offsets are read first as they carry the rates.
        ts_ms = int(time.time() * 1000)
        start_offsets, end_offsets = log_offsets_list(admin=admin, partitions=partitions)
        sizes_errors: list[str] = []
        sizes = replica_sizes_read(cluster=cluster, errors=sizes_errors)
        committed = committed_offsets_list(admin=admin)
        records = metric_records_build(
            ts_ms=ts_ms,
            partitions=partitions,
            start_offsets=start_offsets,
            end_offsets=end_offsets,
            sizes=sizes,
            committed=committed,
        )
        metric_records_publish(cluster=cluster, topic=topic, records=records)
        groups = {g for per_group in committed.values() for g in per_group}
        return SampleResult(
            ts_ms=ts_ms,
            partitions=len(partitions),
            records=len(records),
            consumer_groups=len(groups),
            sizes_known=sizes is not None,
            sizes_error="; ".join(sizes_errors),
            seconds=time.monotonic() - started,
        )
