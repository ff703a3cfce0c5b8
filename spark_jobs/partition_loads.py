"""Aggregate metric samples into per-partition and per-broker loads per window.

extract   -> `metrics_extract`: batch-read the new records of the metrics topic
             with Spark's Kafka source.
transform -> pure DataFrame functions (`records_parse` ... `broker_loads_compute`),
             unit-tested on a local session with hand-made samples.
load      -> `aggregation_execute` collects the (small) results to the driver;
             apps.metrics.services.storage writes them to the database.

Pure PySpark: nothing in spark_jobs/ imports Django or the apps (a test checks).

Windows are `window_ms` long and slide by `slide_ms` (equal: tumbling), aligned
to the epoch. Each sample is tagged with its pane (one slide); a small summary
per metrics-topic partition and pane gives the watermark, and then only the
windows that completed in this batch are aggregated, straight from the samples
(one reducing shuffle). A window is complete once a sample at or after its end
has been read (the sampler flushes each round before starting the next). Records
of a pane some later window still needs are read again by the next run (or kept
in the warm session, spark_jobs.sample_cache): the stored offsets are rewound to
the first of them. Records of panes whose every window was already written are
late and are dropped.

The job's entry point, which needs Django because the results go to the database,
is the `metrics_aggregate` management command (apps/metrics/management/commands).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_jobs.metrics_schema import METRIC_RECORD_SCHEMA, METRIC_RECORD_VERSION

MALFORMED = "malformed"
LATE = "late"
OPEN = "open"
COMPLETE = "complete"

GROUP_KEYS = ["topic", "partition", "window_start", "window_end"]


# --- extract -------------------------------------------------------------------


def metrics_extract(
    spark: SparkSession,
    *,
    bootstrap_servers: str,
    topic: str,
    starting_offsets: dict[int, int] | None = None,
    starting_timestamp_ms: int | None = None,
    ending_offsets: dict[int, int] | None = None,
    kafka_options: dict[str, str] | None = None,
) -> DataFrame:
    """Kafka rows (partition, offset, value) from the starting point to the end.

    `starting_offsets` and `ending_offsets` must name every partition of the topic
    (-2 = earliest); without them the read starts at `starting_timestamp_ms`, or at
    the earliest offset, and ends at the latest.
    """
    reader = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("subscribe", topic)
        # Retention may have deleted what we stored an offset for: carry on.
        .option("failOnDataLoss", "false")
    )
    if ending_offsets:
        ends = {str(p): int(o) for p, o in sorted(ending_offsets.items())}
        reader = reader.option("endingOffsets", json.dumps({topic: ends}))
    else:
        reader = reader.option("endingOffsets", "latest")
    for key, value in (kafka_options or {}).items():
        reader = reader.option(f"kafka.{key}", value)
    if starting_offsets:
        offsets = {str(p): int(o) for p, o in sorted(starting_offsets.items())}
        reader = reader.option("startingOffsets", json.dumps({topic: offsets}))
    elif starting_timestamp_ms is not None:
        reader = reader.option("startingTimestamp", str(starting_timestamp_ms)).option(
            "startingOffsetsByTimestampStrategy", "latest"
        )
    else:
        reader = reader.option("startingOffsets", "earliest")
    return reader.load().select("partition", "offset", "value")


# --- transform -------------------------------------------------------------------


def records_parse(raw: DataFrame, *, window_ms: int) -> DataFrame:
    """Parse Kafka rows into samples with `valid`, their pane and the Kafka position.

    `window_ms` here is the pane length: the slide (the window itself when tumbling);
    `window_start`/`window_end` name the pane (windows_aggregate assigns windows).

    Replica sizes are reduced to the two figures the rates need (the leader's and
    the largest) here, so the shuffle carries scalars instead of a map.
    """
    r = F.from_json(F.col("value").cast("string"), METRIC_RECORD_SCHEMA)
    parsed = raw.select(
        F.col("partition").alias("kafka_partition"),
        F.col("offset").alias("kafka_offset"),
        r.alias("r"),
    ).select("kafka_partition", "kafka_offset", "r.*")
    start = F.coalesce(F.col("start_offset"), F.lit(0))
    valid = (
        (F.col("v") == METRIC_RECORD_VERSION)
        & (F.col("ts") > 0)
        & F.col("topic").isNotNull()
        & (F.length("topic") > 0)
        & (F.col("partition") >= 0)
        & (F.col("end_offset") >= start)
        & (start >= 0)
    )
    # A null anywhere in `valid` means a missing field: malformed too.
    valid = F.coalesce(valid, F.lit(False))
    window_start = F.col("ts") - F.pmod(F.col("ts"), F.lit(window_ms))
    return parsed.select(
        "kafka_partition",
        "kafka_offset",
        valid.alias("valid"),
        # Malformed rows share one group per Kafka partition: null keys.
        *[F.when(valid, F.col(c)).alias(c) for c in ("topic", "partition")],
        F.when(valid, window_start).alias("window_start"),
        F.when(valid, window_start + F.lit(window_ms)).alias("window_end"),
        "ts",
        "leader",
        "replicas",
        start.alias("start_offset"),
        "end_offset",
        F.col("sizes")[F.col("leader").cast("string")].alias("leader_size"),
        F.array_max(F.map_values("sizes")).alias("max_size"),
        "committed",
    )


def batch_summary(
    samples: DataFrame, *, window_ms: int, previous_finalized_ms: int | None
) -> list[dict[str, Any]]:
    """One row per metrics-topic partition and pane (pane null: its malformed
    records): a few dozen rows however many partitions are sampled. The run's first
    action: the watermark, the cursor and the skipped counts are worked out from it
    on the driver (`batch_figures`), not by one Spark job each.

    Fixed-width figures only, so Spark aggregates it by hash: each malformed record
    is a group of its own (its offset in the key), as they are rare. `late_groups`
    lists (max_offset, rows) of the panes every window of which was written before
    (rare: only records read again after a rewind).
    """
    valid = F.col("valid")
    rows = samples.groupBy(
        "kafka_partition",
        "window_start",
        F.when(~valid, F.col("kafka_offset")).alias("malformed_offset"),
    ).agg(
        F.count(F.lit(1)).alias("rows"),
        F.min("kafka_offset").alias("min_offset"),
        F.max("kafka_offset").alias("max_offset"),
        F.max(F.when(valid, F.col("ts"))).alias("watermark"),
    )
    before = previous_finalized_ms if previous_finalized_ms is not None else -1
    summary: dict[tuple[int, int | None], dict[str, Any]] = {}
    for r in rows_collect(rows):
        key = (r["kafka_partition"], r["window_start"])
        s = summary.get(key)
        if s is None:
            s = summary[key] = {
                "kafka_partition": r["kafka_partition"],
                "window_start": r["window_start"],
                "rows": 0,
                "min_offset": r["min_offset"],
                "max_offset": r["max_offset"],
                "watermark": None,
                "malformed_offsets": [],
                "late_groups": [],
            }
        s["rows"] += r["rows"]
        s["min_offset"] = min(s["min_offset"], r["min_offset"])
        s["max_offset"] = max(s["max_offset"], r["max_offset"])
        if r["watermark"] is not None:
            s["watermark"] = max(s["watermark"] or r["watermark"], r["watermark"])
        if r["malformed_offset"] is not None:
            s["malformed_offsets"].append(r["malformed_offset"])
    for s in summary.values():
        if s["window_start"] is not None and s["window_start"] + window_ms <= before:
            s["late_groups"] = [{"max_offset": s["max_offset"], "rows": s["rows"]}]
    return list(summary.values())


@dataclass(frozen=True)
class BatchFigures:
    input_rows: int
    finalized_until_ms: int | None
    # Start of the oldest valid pane read (None: no valid sample).
    oldest_pane_ms: int | None
    next_offsets: dict[int, int]
    malformed_rows: int
    late_rows: int


def batch_figures(
    summary: list[dict[str, Any]],
    *,
    window_ms: int,
    slide_ms: int,
    previous_finalized_ms: int | None,
) -> BatchFigures:
    """From `batch_summary`'s rows: the newest complete window's end, where the next
    run starts reading per metrics-topic partition (the first record of a pane a
    window not complete yet holds, else one past the last record read), and the
    malformed and late records the next run will not read again.

    A pane [p, p + slide) lies in the windows ending at p + slide ... p + window; it
    is late when the last of them was written before, open when it is not complete.
    """
    valid = [r for r in summary if r["window_start"] is not None]
    watermarks = [r["watermark"] for r in valid if r["watermark"] is not None]
    finalized = window_finalized_until(
        watermark_ms=max(watermarks) if watermarks else None,
        window_ms=slide_ms,
        previous_ms=previous_finalized_ms,
    )
    before = previous_finalized_ms if previous_finalized_ms is not None else -1
    until = finalized if finalized is not None else -1
    first_open: dict[int, int] = {}
    last_read: dict[int, int] = {}
    for r in summary:
        kp = int(r["kafka_partition"])
        last_read[kp] = max(last_read.get(kp, -1), int(r["max_offset"]))
        last_end = None if r["window_start"] is None else r["window_start"] + window_ms
        if last_end is not None and last_end > before and last_end > until:
            first_open[kp] = min(first_open.get(kp, int(r["min_offset"])), int(r["min_offset"]))
    next_offsets = {kp: first_open.get(kp, end + 1) for kp, end in last_read.items()}
    malformed = late = 0
    for r in summary:
        limit = next_offsets[int(r["kafka_partition"])]
        malformed += sum(1 for o in r["malformed_offsets"] or [] if o < limit)
        late += sum(g["rows"] for g in r["late_groups"] or [] if g["max_offset"] < limit)
    return BatchFigures(
        input_rows=int(sum(r["rows"] for r in summary)),
        finalized_until_ms=finalized,
        oldest_pane_ms=min((r["window_start"] for r in valid), default=None),
        next_offsets=next_offsets,
        malformed_rows=malformed,
        late_rows=late,
    )


def window_finalized_until(
    *, watermark_ms: int | None, window_ms: int, previous_ms: int | None
) -> int | None:
    """End of the newest complete window: every window ending at or before it is complete."""
    if watermark_ms is None:
        return previous_ms
    boundary = watermark_ms - watermark_ms % window_ms
    return boundary if previous_ms is None else max(previous_ms, boundary)


def window_ends_due(
    *,
    finalized_until_ms: int,
    previous_finalized_ms: int | None,
    oldest_pane_ms: int,
    window_ms: int,
    slide_ms: int,
) -> list[int]:
    """Ends of the windows that completed in this batch, oldest first.

    A first run (no previous boundary) composes the windows that hold at least two
    of the panes it read (a rate needs two samples; the windows after the first run
    are written as soon as they complete, however few panes they hold, so a fresh
    start's first window need not wait a whole window length), or when tumbling each
    complete one; when sliding, only one window length of them (the windows overlap).
    """
    if previous_finalized_ms is None:
        lower = oldest_pane_ms + min(slide_ms, window_ms - slide_ms)
        if slide_ms < window_ms:
            lower = max(lower, finalized_until_ms - window_ms)
    else:
        lower = previous_finalized_ms
    first = lower - lower % slide_ms + slide_ms
    return list(range(first, finalized_until_ms + 1, slide_ms))


def windows_aggregate(samples: DataFrame, *, ends: list[int], window_ms: int) -> DataFrame:
    """The windows ending at `ends`, straight from the samples: each valid sample
    goes to the due windows holding its pane (one per run in the steady state), and
    one aggregation per partition and window keeps its first and last sample and
    counts the samples. A partition's samples sit in one Kafka partition, so the
    map side reduces them to one row per partition and window before the shuffle.
    Records of panes no due window holds (late ones included) drop out here.
    """
    start, end = F.col("window_start"), F.col("window_end")
    holding = F.filter(
        F.array(*[F.lit(e) for e in ends]) if ends else F.array().cast("array<bigint>"),
        lambda e: (e - F.lit(window_ms) <= start) & (end <= e),
    )
    exploded = samples.where(F.col("valid")).select(
        "kafka_partition",
        "topic",
        "partition",
        F.explode(holding).alias("w_end"),
        "ts",
        "leader",
        "replicas",
        "start_offset",
        "end_offset",
        "leader_size",
        "max_size",
        "committed",
    )
    return exploded.groupBy(
        "kafka_partition",
        "topic",
        "partition",
        (F.col("w_end") - F.lit(window_ms)).alias("window_start"),
        F.col("w_end").alias("window_end"),
    ).agg(
        F.count(F.lit(1)).alias("samples"),
        F.min_by(
            F.struct("ts", "start_offset", "end_offset", "leader_size", "committed"), F.col("ts")
        ).alias("first"),
        F.max_by(
            F.struct(
                "ts",
                "start_offset",
                "end_offset",
                "leader_size",
                "max_size",
                "leader",
                "replicas",
                "committed",
            ),
            F.col("ts"),
        ).alias("last"),
    )


def _rate(delta: Column, dt_seconds: Column) -> Column:
    return F.when(dt_seconds > 0, delta / dt_seconds)


def partition_loads_compute(groups: DataFrame) -> DataFrame:
    """Per partition and window: messages_in, bytes_in, bytes_out (per second), size.

    Rates run from the first to the last sample of the window.
    - bytes_in is the growth of the leader replica's size, unless segments were
      deleted or compacted in between (log-start offset moved, or the size
      shrank); then it is offset growth x average record size.
    - bytes_out is the summed progress of the committed offsets of every consumer
      group committed at both the first and the last sample, x average record
      size (average = leader size / records on disk).
    - size is the leader replica's size at the last sample (largest replica if the
      leader's is unknown).
    A projection of windows_aggregate's rows: no shuffle.
    """
    first, last = F.col("first"), F.col("last")
    dt = (last["ts"] - first["ts"]) / 1000.0
    appended = last["end_offset"] - first["end_offset"]
    on_disk = last["end_offset"] - last["start_offset"]
    avg_size = F.when(
        (on_disk > 0) & last["leader_size"].isNotNull(), last["leader_size"] / on_disk
    )
    shrank = (last["start_offset"] > first["start_offset"]) | (
        last["leader_size"] < first["leader_size"]
    )
    growth_usable = first["leader_size"].isNotNull() & last["leader_size"].isNotNull() & ~shrank
    messages_in = F.when(appended >= 0, _rate(appended, dt))
    bytes_in = (
        F.when(messages_in.isNull(), F.lit(None))
        .when(appended == 0, F.lit(0.0))
        .when(growth_usable, _rate(last["leader_size"] - first["leader_size"], dt))
        .otherwise(messages_in * avg_size)
    )
    # A group that rewound its offsets consumed nothing new.
    progress = F.map_values(
        F.map_zip_with(
            F.coalesce(first["committed"], F.create_map().cast("map<string,bigint>")),
            F.coalesce(last["committed"], F.create_map().cast("map<string,bigint>")),
            lambda _k, c0, c1: F.when(
                c0.isNotNull() & c1.isNotNull(), F.greatest(c1 - c0, F.lit(0))
            ),
        )
    )
    consumed = F.aggregate(
        progress, F.lit(0).cast("bigint"), lambda acc, x: acc + F.coalesce(x, F.lit(0))
    )
    consumer_groups = F.size(F.filter(progress, lambda x: x.isNotNull()))
    consumed_rate = F.when(consumer_groups == 0, F.lit(0.0)).otherwise(_rate(consumed, dt))
    bytes_out = F.when(consumed_rate == 0, F.lit(0.0)).otherwise(consumed_rate * avg_size)
    return groups.select(
        *GROUP_KEYS,
        "samples",
        last["leader"].alias("leader"),
        last["replicas"].alias("replicas"),
        messages_in.cast("double").alias("messages_in"),
        bytes_in.cast("double").alias("bytes_in"),
        bytes_out.cast("double").alias("bytes_out"),
        F.coalesce(last["leader_size"], last["max_size"]).alias("size"),
        avg_size.cast("double").alias("avg_record_size"),
        consumer_groups.alias("consumer_groups"),
    )


def broker_loads_compute(partition_loads: DataFrame) -> DataFrame:
    """Broker loads per window from partition loads, by the load model of BALANCING.md §3.

    Every replica's broker: network_in += bytes_in, disk += size, replicas += 1.
    The current leader's broker in addition: network_out += bytes_out +
    bytes_in x (replicas - 1), leaders += 1. Unknown loads count as zero.
    """
    r = partition_loads.select(
        "window_start",
        "window_end",
        "leader",
        F.size("replicas").alias("rf"),
        F.coalesce("bytes_in", F.lit(0.0)).alias("bi"),
        F.coalesce("bytes_out", F.lit(0.0)).alias("bo"),
        F.coalesce("size", F.lit(0)).alias("sz"),
        F.explode("replicas").alias("broker"),
    )
    is_leader = F.col("broker") == F.col("leader")
    # One aggregation of per-broker totals: no per-topic replica counts (a map of every
    # topic per broker), as nothing reads them.
    return r.groupBy("window_start", "window_end", "broker").agg(
        F.sum("bi").alias("network_in"),
        F.sum(
            F.when(is_leader, F.col("bo") + F.col("bi") * (F.col("rf") - 1)).otherwise(0.0)
        ).alias("network_out"),
        F.sum("sz").alias("disk"),
        F.count(F.lit(1)).alias("replicas"),
        F.sum(is_leader.cast("int")).alias("leaders"),
    )


# --- load (to the driver) ---------------------------------------------------------


@dataclass
class AggregationResult:
    input_rows: int = 0
    malformed_rows: int = 0
    late_rows: int = 0
    partition_loads: list[dict[str, Any]] = field(default_factory=list)
    broker_loads: list[dict[str, Any]] = field(default_factory=list)
    # Metrics-topic partition -> first offset the next run reads.
    next_offsets: dict[int, int] = field(default_factory=dict)
    finalized_until_ms: int | None = None


def rows_collect(df: DataFrame) -> list[dict[str, Any]]:
    # Rows are tuples; zipping is much cheaper than Row.asDict(recursive=True), and
    # the results hold no nested structs (arrays and maps arrive as lists and dicts).
    columns = df.columns
    return [dict(zip(columns, row, strict=True)) for row in df.collect()]


def aggregation_execute(
    spark: SparkSession,
    *,
    raw: DataFrame | None = None,
    samples: DataFrame | None = None,
    window_ms: int,
    previous_finalized_ms: int | None,
    slide_ms: int | None = None,
) -> AggregationResult:
    """Run every transform over one batch of Kafka rows and collect the results.

    `raw` is the batch as the Kafka source gives it; or `samples`, the batch already
    parsed by records_parse into panes of the slide (e.g. kept from earlier runs,
    spark_jobs.sample_cache), which the caller persists. Raw rows are parsed once
    and kept for the two passes: the per-pane summary (the run's figures) and the
    due windows (one reducing shuffle).
    """
    slide = slide_ms or window_ms
    if window_ms % slide:
        raise ValueError(
            f"the window ({window_ms} ms) must be a multiple of the slide ({slide} ms)"
        )
    if (raw is None) == (samples is None):
        raise ValueError("pass either raw or samples")
    owned = samples is None
    if samples is None:
        samples = records_parse(raw, window_ms=slide).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        figures = batch_figures(
            batch_summary(
                samples, window_ms=window_ms, previous_finalized_ms=previous_finalized_ms
            ),
            window_ms=window_ms,
            slide_ms=slide,
            previous_finalized_ms=previous_finalized_ms,
        )
        if figures.input_rows == 0:
            return AggregationResult(finalized_until_ms=previous_finalized_ms)
        finalized, oldest = figures.finalized_until_ms, figures.oldest_pane_ms
        result = AggregationResult(
            input_rows=figures.input_rows,
            malformed_rows=figures.malformed_rows,
            late_rows=figures.late_rows,
            next_offsets=figures.next_offsets,
            finalized_until_ms=finalized,
        )
        if finalized is None or finalized == previous_finalized_ms or oldest is None:
            return result  # no window completed in this batch
        ends = window_ends_due(
            finalized_until_ms=finalized,
            previous_finalized_ms=previous_finalized_ms,
            oldest_pane_ms=oldest,
            window_ms=window_ms,
            slide_ms=slide,
        )
        if not ends:
            return result
        windows = windows_aggregate(samples, ends=ends, window_ms=window_ms)
        loads = partition_loads_compute(windows).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            result.partition_loads = rows_collect(loads)
            result.broker_loads = rows_collect(broker_loads_compute(loads))
        finally:
            loads.unpersist()
        return result
    finally:
        if owned:
            samples.unpersist()


def aggregation_warm_up(spark: SparkSession, *, window_ms: int, slide_ms: int) -> int:
    """Run the whole job once on three made-up samples of one partition, so a session
    started ahead of its first run has its classes loaded and its code generated
    before the first real batch; returns the partition loads it computed (1)."""
    from pyspark.sql.types import BinaryType, IntegerType, LongType, StructField, StructType

    from spark_jobs.metrics_schema import metric_record_encode

    schema = StructType(
        [
            StructField("partition", IntegerType()),
            StructField("offset", LongType()),
            StructField("value", BinaryType()),
        ]
    )
    rows = [
        (
            0,
            i,
            metric_record_encode(
                ts_ms=(i + 1) * slide_ms,
                topic="warm-up",
                partition=0,
                leader=1,
                replicas=[1],
                start_offset=0,
                end_offset=100 * i,
                sizes={1: 1000 * i},
                committed={},
            ),
        )
        for i in range(3)
    ]
    result = aggregation_execute(
        spark,
        raw=spark.createDataFrame(rows, schema),
        window_ms=window_ms,
        slide_ms=slide_ms,
        previous_finalized_ms=None,
    )
    return len(result.partition_loads)
