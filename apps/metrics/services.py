"""Traffic metrics: sample the cluster, aggregate the samples on Spark, keep the windows.

See docs/metrics.md for the record schema, the windows and how the rates are derived.
"""

from __future__ import annotations

import logging
import os
import shlex
import subprocess
import sys
import time
import traceback
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from confluent_kafka import (
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import (
    AdminClient,
    NewTopic,
    OffsetSpec,
)
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.clusters.kafka_clients import admin_client_create, client_config_build
from apps.clusters.models import Cluster

from .models import AggregationRun, BrokerLoad, MetricsCursor, PartitionLoad

logger = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parent.parent.parent


def _setting(name: str, default: Any) -> Any:
    return getattr(settings, name, default)


def window_seconds() -> int:
    return int(_setting("METRICS_WINDOW_SECONDS", 60))


def windows_kept() -> int:
    return int(_setting("METRICS_WINDOWS_KEPT", 60))


def _timeout() -> float:
    return float(settings.KAFKA_REQUEST_TIMEOUT)


def _ms_to_dt(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def _dt_to_ms(dt: datetime) -> int:
    return int(dt.timestamp() * 1000)


# --- sampler ------------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionInfo:
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


def metrics_topic_ensure(
    *, admin: AdminClient, topic: str, existing: set[str], brokers: int
) -> None:
    """Create the metrics topic if missing: time retention, at most 3 replicas."""
    if topic in existing:
        return
    new = NewTopic(
        topic,
        num_partitions=int(_setting("METRICS_TOPIC_PARTITIONS", 6)),
        replication_factor=max(1, min(3, brokers)),
        config={
            "cleanup.policy": "delete",
            "retention.ms": str(int(_setting("METRICS_TOPIC_RETENTION_MS", 24 * 3600 * 1000))),
        },
    )
    try:
        admin.create_topics([new], request_timeout=_timeout())[topic].result(_timeout())
    except KafkaException as exc:
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
            partitions.append(
                PartitionInfo(
                    topic=name, partition=index, leader=p.leader, replicas=list(p.replicas)
                )
            )
    return partitions, set(md.topics), len(md.brokers)


def log_offsets_list(
    *, admin: AdminClient, partitions: list[PartitionInfo]
) -> tuple[dict[tuple[str, int], int], dict[tuple[str, int], int]]:
    """(log-start, log-end) offsets; librdkafka sends one ListOffsets per leader broker."""
    result: list[dict[tuple[str, int], int]] = []
    online = [p for p in partitions if p.leader >= 0]
    for spec in (OffsetSpec.earliest(), OffsetSpec.latest()):
        if not online:
            result.append({})
            continue
        request = {TopicPartition(p.topic, p.partition): spec for p in online}
        futures = admin.list_offsets(request, request_timeout=_timeout())
        offsets: dict[tuple[str, int], int] = {}
        for tp, future in futures.items():
            try:
                offsets[(tp.topic, tp.partition)] = future.result(_timeout()).offset
            except KafkaException as exc:
                # A partition that just lost its leader: skip it this round.
                logger.debug("list_offsets %s-%s: %s", tp.topic, tp.partition, exc)
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


def replica_sizes_read(*, cluster: Cluster) -> dict[tuple[str, int, int], int] | None:
    """Replica sizes, or None when DescribeLogDirs failed (the job then uses offsets)."""
    from apps.clusters.kafka_python_adapter import replica_sizes_describe

    try:
        return replica_sizes_describe(bootstrap_servers=cluster.bootstrap_servers)
    except Exception as exc:  # kafka-python raises many unrelated types
        logger.warning("describe_log_dirs on %s failed: %s", cluster.name, exc)
        return None


def metric_records_build(
    *,
    ts_ms: int,
    partitions: list[PartitionInfo],
    start_offsets: dict[tuple[str, int], int],
    end_offsets: dict[tuple[str, int], int],
    sizes: dict[tuple[str, int, int], int] | None,
    committed: dict[tuple[str, int], dict[str, int]],
) -> list[tuple[bytes, bytes]]:
    """(key, value) per partition whose offsets are known, in the schema of metrics_schema."""
    from spark_jobs.metrics_schema import metric_key_encode, metric_record_encode

    records = []
    for p in partitions:
        tp = (p.topic, p.partition)
        if tp not in end_offsets or tp not in start_offsets:
            continue
        replica_sizes = {
            b: sizes[(p.topic, p.partition, b)]
            for b in p.replicas
            if sizes is not None and (p.topic, p.partition, b) in sizes
        }
        records.append(
            (
                metric_key_encode(topic=p.topic, partition=p.partition),
                metric_record_encode(
                    ts_ms=ts_ms,
                    topic=p.topic,
                    partition=p.partition,
                    leader=p.leader,
                    replicas=p.replicas,
                    start_offset=start_offsets[tp],
                    end_offset=end_offsets[tp],
                    sizes=replica_sizes,
                    committed=committed.get(tp, {}),
                ),
            )
        )
    return records


def metric_records_publish(
    *, cluster: Cluster, topic: str, records: list[tuple[bytes, bytes]]
) -> None:
    """Produce and wait for every record; raise if any was not delivered."""
    config = client_config_build(
        bootstrap_servers=cluster.bootstrap_servers, extra=cluster.client_config
    )
    config.update(
        {"linger.ms": 20, "compression.type": "lz4", "queue.buffering.max.messages": 1_000_000}
    )
    producer = Producer(config)
    failures: list[str] = []

    def on_delivery(err: KafkaError | None, _msg: Any) -> None:
        if err is not None:
            failures.append(str(err))

    for key, value in records:
        while True:
            try:
                producer.produce(topic, key=key, value=value, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.1)  # local queue full: let deliveries drain
    remaining = producer.flush(_timeout() * 3)
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
    admin = admin or admin_client_create(
        bootstrap_servers=cluster.bootstrap_servers, extra=cluster.client_config
    )
    topic = settings.METRICS_TOPIC
    partitions, existing, brokers = partitions_describe(admin=admin)
    metrics_topic_ensure(admin=admin, topic=topic, existing=existing, brokers=brokers)
    # One timestamp per round; the offsets are read first as they carry the rates.
    ts_ms = int(time.time() * 1000)
    start_offsets, end_offsets = log_offsets_list(admin=admin, partitions=partitions)
    sizes = replica_sizes_read(cluster=cluster)
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
        seconds=time.monotonic() - started,
    )


# --- aggregation ------------------------------------------------------------------


class AggregationAlreadyRunning(Exception):
    """Another aggregation of this cluster is still running."""


def aggregation_run_start(*, cluster: Cluster, spark_master: str = "") -> AggregationRun:
    """Take the per-cluster lock by creating the one running run row.

    A run that has been running longer than METRICS_AGGREGATION_TIMEOUT is
    taken for dead (its worker crashed) and marked failed first.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=float(_setting("METRICS_AGGREGATION_TIMEOUT", 900)))
    AggregationRun.objects.filter(
        cluster=cluster, status=AggregationRun.Status.RUNNING, started_at__lt=stale
    ).update(status=AggregationRun.Status.FAILED, finished_at=now, error="abandoned: timed out")
    try:
        with transaction.atomic():
            return AggregationRun.objects.create(
                cluster=cluster, started_at=now, spark_master=spark_master
            )
    except IntegrityError:
        raise AggregationAlreadyRunning(
            f"an aggregation of cluster {cluster.name} is already running"
        ) from None


@dataclass(frozen=True)
class ReadRange:
    """Offsets of the metrics topic one run reads: [start, end) per partition."""

    start: dict[int, int]
    end: dict[int, int]


def metrics_read_range(
    *, cluster: Cluster, topic: str, stored: dict[str, int], since_ms: int
) -> ReadRange | None:
    """Where to read from (the stored offsets, else the first record at or after
    `since_ms`) and up to (the end now). None when the topic does not exist yet.

    Fixing the end here, not with Spark's "latest", lets the cursor advance for
    partitions that had nothing new.
    """
    admin = admin_client_create(
        bootstrap_servers=cluster.bootstrap_servers, extra=cluster.client_config
    )
    md = admin.list_topics(topic=topic, timeout=_timeout())
    t = md.topics.get(topic)
    if t is None or t.error is not None:
        return None
    partitions = sorted(t.partitions)

    def listed(spec_for) -> dict[int, int]:
        request = {TopicPartition(topic, p): spec_for(p) for p in partitions}
        futures = admin.list_offsets(request, request_timeout=_timeout())
        return {tp.partition: f.result(_timeout()).offset for tp, f in futures.items()}

    end = listed(lambda _p: OffsetSpec.latest())
    missing = [p for p in partitions if str(p) not in stored]
    by_time = listed(lambda _p: OffsetSpec.for_timestamp(since_ms)) if missing else {}
    start = {}
    for p in partitions:
        if str(p) in stored:
            start[p] = min(int(stored[str(p)]), end[p])
        else:
            # -1: no record at or after since_ms, so nothing to read yet.
            start[p] = end[p] if by_time.get(p, -1) < 0 else by_time[p]
    return ReadRange(start=start, end=end)


def kafka_source_options(*, cluster: Cluster) -> dict[str, str]:
    """The cluster's connection as Java client properties (the job prefixes `kafka.`)."""
    from apps.clusters.connection import java_client_properties
    from apps.clusters.kafka_clients import client_timeouts

    return java_client_properties(cluster.connection, timeouts=client_timeouts())


def _one_per_window(loads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One load per partition and window, the one with most samples.

    Two only appear when the metrics topic gained partitions mid-window, which
    splits one partition's samples over two Kafka partitions.
    """
    best: dict[tuple[str, int, int], dict[str, Any]] = {}
    for r in loads:
        key = (r["topic"], r["partition"], r["window_start"])
        if key not in best or r["samples"] > best[key]["samples"]:
            best[key] = r
    return list(best.values())


def aggregation_results_store(
    *, cluster: Cluster, run: AggregationRun, topic: str, result: Any
) -> None:
    """Write windows, advance the cursor and prune, all in one transaction."""
    partition_rows = [
        PartitionLoad(
            cluster=cluster,
            topic=r["topic"],
            partition=r["partition"],
            window_start=_ms_to_dt(r["window_start"]),
            window_end=_ms_to_dt(r["window_end"]),
            samples=r["samples"],
            leader=r["leader"],
            replicas=r["replicas"] or [],
            messages_in=r["messages_in"],
            bytes_in=r["bytes_in"],
            bytes_out=r["bytes_out"],
            size=r["size"],
            avg_record_size=r["avg_record_size"],
            consumer_groups=r["consumer_groups"],
        )
        for r in _one_per_window(result.partition_loads)
    ]
    broker_rows = [
        BrokerLoad(
            cluster=cluster,
            broker_id=r["broker"],
            window_start=_ms_to_dt(r["window_start"]),
            window_end=_ms_to_dt(r["window_end"]),
            network_in=r["network_in"],
            network_out=r["network_out"],
            disk=r["disk"],
            replicas=r["replicas"],
            leaders=r["leaders"],
            topic_replicas=r["topic_replicas"] or {},
        )
        for r in result.broker_loads
    ]
    with transaction.atomic():
        # A window is written once; re-running after a crash rewrites the same rows.
        PartitionLoad.objects.bulk_create(
            partition_rows,
            batch_size=2000,
            update_conflicts=True,
            unique_fields=["cluster", "window_start", "topic", "partition"],
            update_fields=[
                "window_end",
                "samples",
                "leader",
                "replicas",
                "messages_in",
                "bytes_in",
                "bytes_out",
                "size",
                "avg_record_size",
                "consumer_groups",
            ],
        )
        BrokerLoad.objects.bulk_create(
            broker_rows,
            batch_size=2000,
            update_conflicts=True,
            unique_fields=["cluster", "window_start", "broker_id"],
            update_fields=[
                "window_end",
                "network_in",
                "network_out",
                "disk",
                "replicas",
                "leaders",
                "topic_replicas",
            ],
        )
        cursor, _ = MetricsCursor.objects.select_for_update().get_or_create(
            cluster=cluster, defaults={"topic": topic}
        )
        if cursor.topic != topic:
            cursor.topic, cursor.offsets = topic, {}
        cursor.offsets = {**cursor.offsets, **{str(p): o for p, o in result.next_offsets.items()}}
        if result.finalized_until_ms is not None:
            cursor.finalized_until = _ms_to_dt(result.finalized_until_ms)
        cursor.save()
        metrics_windows_prune(cluster=cluster)
    run.input_rows = result.input_rows
    run.output_rows = len(partition_rows)
    run.broker_rows = len(broker_rows)
    run.malformed_rows = result.malformed_rows
    run.late_rows = result.late_rows
    run.windows = sorted(
        {r.window_start.isoformat() for r in broker_rows}
        | {r.window_start.isoformat() for r in partition_rows}
    )


def metrics_windows_prune(*, cluster: Cluster, keep: int | None = None) -> int:
    """Keep the windows of the last `keep` window lengths before the newest one."""
    keep = keep or windows_kept()
    newest = (
        PartitionLoad.objects.filter(cluster=cluster)
        .order_by("-window_start")
        .values_list("window_start", flat=True)
        .first()
    )
    if newest is None:
        return 0
    cutoff = newest - timedelta(seconds=window_seconds() * (keep - 1))
    deleted, _ = PartitionLoad.objects.filter(cluster=cluster, window_start__lt=cutoff).delete()
    BrokerLoad.objects.filter(cluster=cluster, window_start__lt=cutoff).delete()
    runs_cutoff = timezone.now() - timedelta(days=int(_setting("METRICS_RUNS_KEPT_DAYS", 7)))
    AggregationRun.objects.filter(cluster=cluster, started_at__lt=runs_cutoff).exclude(
        status=AggregationRun.Status.RUNNING
    ).delete()
    return deleted


def aggregation_run(
    *, cluster: Cluster, spark: Any = None, run: AggregationRun | None = None
) -> AggregationRun:
    """Aggregate the new records of a cluster's metrics topic into windows. Recorded as a run.

    `run` is a run already started (and so locked) by aggregation_submit. Raises
    AggregationAlreadyRunning when another run of this cluster holds the lock;
    any other failure is recorded on the run (status failed) and not raised.
    """
    from spark_jobs.partition_loads import aggregation_execute, metrics_extract
    from spark_jobs.session import spark_session_build

    master = os.environ.get("SPARK_MASTER") or settings.SPARK_MASTER
    run = run or aggregation_run_start(cluster=cluster, spark_master=master)
    topic = settings.METRICS_TOPIC
    try:
        cursor = MetricsCursor.objects.filter(cluster=cluster, topic=topic).first()
        # A first run reads only what the kept windows can hold.
        since_ms = int(time.time() * 1000) - window_seconds() * 1000 * (windows_kept() + 1)
        span = metrics_read_range(
            cluster=cluster,
            topic=topic,
            stored=cursor.offsets if cursor else {},
            since_ms=since_ms,
        )
        if span is not None:
            spark = spark or spark_session_build(master=master)
            raw = metrics_extract(
                spark,
                bootstrap_servers=cluster.bootstrap_servers,
                topic=topic,
                starting_offsets=span.start,
                ending_offsets=span.end,
                kafka_options=kafka_source_options(cluster=cluster),
            )
            previous = cursor.finalized_until if cursor else None
            result = aggregation_execute(
                spark,
                raw=raw,
                window_ms=window_seconds() * 1000,
                previous_finalized_ms=_dt_to_ms(previous) if previous else None,
            )
            # Partitions with nothing new resume where this read ended.
            result.next_offsets = {**span.end, **result.next_offsets}
            aggregation_results_store(cluster=cluster, run=run, topic=topic, result=result)
        run.status = AggregationRun.Status.SUCCEEDED
    except Exception:
        logger.exception("aggregation of %s failed", cluster.name)
        run.status = AggregationRun.Status.FAILED
        run.error = traceback.format_exc()[-10_000:]
    run.finished_at = timezone.now()
    run.save()
    return run


def spark_submit_command(*, cluster: Cluster, run: AggregationRun) -> list[str]:
    """spark-submit of spark_jobs/partition_loads.py with the Kafka source jars.

    SPARK_MASTER picks the cluster; SPARK_SUBMIT_OPTIONS adds any other
    spark-submit flags (e.g. "--executor-memory 4g"); SPARK_CONF_DIR's
    spark-defaults.conf applies as usual.
    """
    from spark_jobs.session import connector_jars_ensure

    submit = Path(sys.executable).with_name("spark-submit")
    master = os.environ.get("SPARK_MASTER") or settings.SPARK_MASTER
    return [
        str(submit) if submit.exists() else "spark-submit",
        "--master",
        master,
        "--jars",
        ",".join(connector_jars_ensure()),
        "--conf",
        "spark.ui.enabled=false",
        *shlex.split(os.environ.get("SPARK_SUBMIT_OPTIONS", "")),
        str(REPO_ROOT / "spark_jobs" / "partition_loads.py"),
        "--cluster",
        cluster.name,
        "--run-id",
        str(run.pk),
    ]


def aggregation_submit(*, cluster: Cluster) -> AggregationRun:
    """Run one aggregation of a cluster through spark-submit and return its run.

    The lock is taken here, before the JVM starts, so a second submission fails
    fast with AggregationAlreadyRunning. The job fills in the run; if it dies
    before it can, the run is marked failed here with the end of its output.
    """
    master = os.environ.get("SPARK_MASTER") or settings.SPARK_MASTER
    run = aggregation_run_start(cluster=cluster, spark_master=master)
    env = {
        **os.environ,
        "SPARK_SUBMITTED": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
        "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
        "PYSPARK_DRIVER_PYTHON": os.environ.get("PYSPARK_DRIVER_PYTHON", sys.executable),
    }
    timeout = float(_setting("METRICS_AGGREGATION_TIMEOUT", 900))
    try:
        proc = subprocess.run(
            spark_submit_command(cluster=cluster, run=run),
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        code, output = proc.returncode, (proc.stdout + proc.stderr)
    except (OSError, subprocess.SubprocessError) as exc:
        code, output = -1, f"{type(exc).__name__}: {exc}"
    run.refresh_from_db()
    if run.status == AggregationRun.Status.RUNNING:
        logger.warning("aggregation of %s exited %s without recording", cluster.name, code)
        run.status = AggregationRun.Status.FAILED
        run.finished_at = timezone.now()
        run.error = f"spark-submit exited {code}\n{output[-5000:]}"
        run.save()
    return run


_worker_spark: Any = None


def spark_session_for_worker() -> Any:
    """One SparkSession per worker process, kept warm between runs."""
    global _worker_spark
    if _worker_spark is None:
        from spark_jobs.session import spark_session_build

        _worker_spark = spark_session_build(
            master=os.environ.get("SPARK_MASTER") or settings.SPARK_MASTER
        )
    return _worker_spark


def aggregation_dispatch(*, cluster: Cluster) -> AggregationRun:
    """One aggregation of a cluster, the way settings say.

    By default through spark-submit (a fresh JVM per run: isolated, memory given
    back, but JIT and query compilation are paid every time). With
    METRICS_AGGREGATION_IN_PROCESS the worker keeps one SparkSession warm and runs
    the job in it, about twice as fast (bench/README.md), at ~1.3 GB resident.
    """
    if _setting("METRICS_AGGREGATION_IN_PROCESS", False):
        return aggregation_run(cluster=cluster, spark=spark_session_for_worker())
    return aggregation_submit(cluster=cluster)
