"""One aggregation in this process: read the metrics topic from the cursor to its
current end, run the Spark job over those records, store the results, recorded as a run.
"""

from __future__ import annotations

import logging
import time
import traceback
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings

from apps.clusters.models import Cluster
from apps.kafka_layer.clients import client_timeouts
from apps.kafka_layer.connection import java_client_properties
from apps.kafka_layer.topic_offsets import topic_offsets_read

from ..models import AggregationRun, MetricsCursor
from .runs import aggregation_run_finish, aggregation_run_start
from .spark_session import spark_master_is_local, spark_session_create
from .storage import aggregation_results_store

logger = logging.getLogger(__name__)


def _dt_to_ms(dt: datetime) -> int:
    return int(dt.timestamp() * 1000)


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
    offsets = topic_offsets_read(
        connection=cluster.connection,
        topic=topic,
        since_ms=since_ms,
        known={int(p) for p in stored},
    )
    if offsets is None:
        return None
    end, by_time = offsets.end, offsets.at_time
    start = {}
    for p in sorted(end):
        if str(p) in stored:
            start[p] = min(int(stored[str(p)]), end[p])
        else:
            # -1: no record at or after since_ms, so nothing to read yet.
            start[p] = end[p] if by_time.get(p, -1) < 0 else by_time[p]
    return ReadRange(start=start, end=end)


def kafka_source_options(*, cluster: Cluster) -> dict[str, str]:
    """The cluster's connection as Java client properties (the job prefixes `kafka.`)."""
    return java_client_properties(cluster.connection, timeouts=client_timeouts())


def aggregation_run(
    *, cluster: Cluster, spark: Any = None, run: AggregationRun | None = None
) -> AggregationRun:
    """Aggregate the new records of a cluster's metrics topic into windows. Recorded as a run.

    `run` is a run already started (and so locked) by aggregation_submit. Raises
    AggregationAlreadyRunning when another run of this cluster holds the lock;
    any other failure is recorded on the run (status failed) and not raised.
    """
    # Samples are kept only in a session that outlives the run: the worker's warm one,
    # unless it is stopped after the run to give a shared cluster's cores back.
    keep_samples = (
        spark is not None
        and settings.METRICS_SAMPLES_KEPT_IN_SESSION
        and (spark_master_is_local() or not settings.SPARK_RELEASE_BETWEEN_RUNS)
    )
    run = run or aggregation_run_start(cluster=cluster, spark_master=settings.SPARK_MASTER)
    topic = settings.METRICS_TOPIC
    laps = _Laps()
    try:
        cursor = MetricsCursor.objects.filter(cluster=cluster, topic=topic).first()
        # A first run reads only what the kept windows can hold.
        window_ms = settings.METRICS_WINDOW_SECONDS * 1000
        since_ms = int(time.time() * 1000) - window_ms * (settings.METRICS_WINDOWS_KEPT + 1)
        span = metrics_read_range(
            cluster=cluster,
            topic=topic,
            stored=cursor.offsets if cursor else {},
            since_ms=since_ms,
        )
        laps.lap("offsets")
        if span is not None:
            _span_aggregate(
                cluster=cluster,
                run=run,
                spark=spark or spark_session_create(),
                span=span,
                cursor=cursor,
                keep_samples=keep_samples,
                laps=laps,
            )
        status, error = AggregationRun.Status.SUCCEEDED, ""
    except Exception:
        logger.exception("aggregation of %s failed", cluster.name)
        status, error = AggregationRun.Status.FAILED, traceback.format_exc()[-10_000:]
    aggregation_run_finish(run=run, status=status, error=error)
    logger.info("aggregation of %s: %s", cluster.name, laps)
    return run


class _Laps:
    """Seconds per phase of a run, logged: where a slow run spends its time (bench_loop
    prints them)."""

    def __init__(self) -> None:
        self.phases: dict[str, float] = {}
        self._mark = time.monotonic()

    def lap(self, name: str) -> None:
        now = time.monotonic()
        self.phases[name] = now - self._mark
        self._mark = now

    def __str__(self) -> str:
        return ", ".join(f"{name} {seconds:.2f} s" for name, seconds in self.phases.items())


def _span_aggregate(
    *,
    cluster: Cluster,
    run: AggregationRun,
    spark: Any,
    span: ReadRange,
    cursor: MetricsCursor | None,
    keep_samples: bool,
    laps: _Laps,
) -> None:
    """Run the Spark job over the records in `span` and store its windows; with
    `keep_samples`, through the session's sample cache (dropped when a step fails, so
    the next run starts afresh)."""
    # pyspark is imported by the processes that aggregate, not by every importer.
    from spark_jobs.partition_loads import aggregation_execute, metrics_extract
    from spark_jobs.sample_cache import sample_cache_get

    topic = settings.METRICS_TOPIC
    slide_ms = settings.METRICS_WINDOW_SLIDE_SECONDS * 1000

    def extract(start: dict[int, int], end: dict[int, int]) -> Any:
        return metrics_extract(
            spark,
            bootstrap_servers=cluster.bootstrap_servers,
            topic=topic,
            starting_offsets=start,
            ending_offsets=end,
            kafka_options=kafka_source_options(cluster=cluster),
        )

    previous = cursor.finalized_until if cursor else None
    window = {
        "window_ms": settings.METRICS_WINDOW_SECONDS * 1000,
        "slide_ms": slide_ms,
        "previous_finalized_ms": _dt_to_ms(previous) if previous else None,
    }
    cache = None
    if keep_samples:
        cache = sample_cache_get(
            key=f"{cluster.pk}:{cluster.bootstrap_servers}:{topic}", spark=spark, slide_ms=slide_ms
        )
    try:
        if cache is not None:
            samples = cache.samples(spark, start=span.start, end=span.end, extract=extract)
            result = aggregation_execute(spark, samples=samples, **window)
        else:
            result = aggregation_execute(spark, raw=extract(span.start, span.end), **window)
        laps.lap("spark")
        # Partitions with nothing new resume where this read ended.
        result.next_offsets = {**span.end, **result.next_offsets}
        aggregation_results_store(cluster=cluster, run=run, topic=topic, result=result)
    except Exception:
        if cache is not None:
            cache.drop()  # the cursor did not move: the next run starts afresh
        raise
    if cache is not None:
        cache.commit(next_start=result.next_offsets)
    laps.lap("store")
