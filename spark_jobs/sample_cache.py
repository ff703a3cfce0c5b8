"""Parsed samples kept in a warm SparkSession between runs, so that a run reads from
Kafka only the records written since the previous run.

Each run must aggregate every record from its start offsets (the cursor: the first
record of the oldest pane a window not yet written still needs) to the end of the
topic. Those records are immutable, so the ones an earlier run of the same session
parsed can be taken from memory (`DataFrame.persist`) instead of Kafka: the cache
keeps one persisted batch per run, each naming the Kafka offsets it holds, and a
run reads from Kafka only from where the newest batch ends. The rows handed to the
job are exactly the ones a full read would give, so the results are the same.

Whenever the cache cannot prove it holds every record from the start offsets on
(a new session, a stopped or restarted one, another slide, a partition missing,
the cursor outside the kept batches, offsets that went backwards), it is dropped
and the run reads the whole range from Kafka: no window is ever composed from a
missing pane. Batches every record of which lies before the next run's start
offsets are unpersisted.

Pure PySpark (no Django); one cache per cluster and metrics topic, in this process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import reduce

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_jobs.partition_loads import records_parse

Offsets = dict[int, int]


@dataclass
class SampleBatch:
    """Parsed records [start, end) per metrics-topic partition, persisted."""

    start: Offsets
    end: Offsets
    frame: DataFrame


def _from_offsets(start: Offsets) -> Column:
    """Rows at or after `start` in their metrics-topic partition."""
    kp, offset = F.col("kafka_partition"), F.col("kafka_offset")
    return reduce(
        lambda acc, c: acc | c,
        [(kp == p) & (offset >= o) for p, o in start.items()],
        F.lit(False),
    )


@dataclass
class SampleCache:
    """The batches one session parsed for one metrics topic and slide."""

    spark: SparkSession
    application_id: str
    slide_ms: int
    batches: list[SampleBatch] = field(default_factory=list)
    pending: SampleBatch | None = None

    @classmethod
    def create(cls, spark: SparkSession, *, slide_ms: int) -> SampleCache:
        return cls(spark=spark, application_id=spark.sparkContext.applicationId, slide_ms=slide_ms)

    def covers(self, spark: SparkSession, *, slide_ms: int, start: Offsets, end: Offsets) -> bool:
        """True when the kept batches hold every record from `start` on, up to a
        point at or before `end`, for every partition of the topic, in this session."""
        if not self.batches or slide_ms != self.slide_ms or spark is not self.spark:
            return False
        try:
            if spark.sparkContext.applicationId != self.application_id:
                return False
        except Exception:
            return False  # a stopped session
        first, last = self.batches[0].start, self.batches[-1].end
        if set(start) != set(first) or set(end) != set(last):
            return False
        return all(first[p] <= start[p] <= last[p] <= end[p] for p in start)

    def samples(
        self,
        spark: SparkSession,
        *,
        start: Offsets,
        end: Offsets,
        extract: Callable[[Offsets, Offsets], DataFrame],
    ) -> DataFrame:
        """The parsed records [start, end): the kept ones, and those after the newest
        batch read through `extract(from, to)`; everything from Kafka when the kept
        batches do not cover `start`. The new batch is kept by `commit`.
        """
        if self.covers(spark, slide_ms=self.slide_ms, start=start, end=end):
            fresh_start = dict(self.batches[-1].end)
        else:
            self.drop()
            self.spark, self.application_id = spark, spark.sparkContext.applicationId
            fresh_start = dict(start)
        fresh = records_parse(extract(fresh_start, end), window_ms=self.slide_ms).persist(
            StorageLevel.MEMORY_AND_DISK
        )
        self.pending = SampleBatch(start=fresh_start, end=dict(end), frame=fresh)
        kept = [
            b.frame.where(_from_offsets(start))
            for b in self.batches
            if any(b.end[p] > start[p] for p in start)
        ]
        return reduce(DataFrame.union, kept, fresh) if kept else fresh

    def commit(self, *, next_start: Offsets) -> None:
        """After a stored run: keep its batch, drop those the next run no longer reads."""
        if self.pending is not None:
            self.batches.append(self.pending)
            self.pending = None
        keep = []
        for b in self.batches:
            if all(b.end[p] <= next_start.get(p, b.end[p]) for p in b.end):
                b.frame.unpersist()
            else:
                keep.append(b)
        self.batches = keep

    def drop(self) -> None:
        """Forget everything (after a failed run, or when it cannot be trusted)."""
        for b in [*self.batches, *([self.pending] if self.pending else [])]:
            try:
                b.frame.unpersist()
            except Exception:
                pass  # the session is gone, and its cache with it
        self.batches, self.pending = [], None


_caches: dict[str, SampleCache] = {}


def sample_cache_get(*, key: str, spark: SparkSession, slide_ms: int) -> SampleCache:
    """This process's cache for `key` (e.g. cluster and topic), created empty."""
    cache = _caches.get(key)
    if cache is None or cache.slide_ms != slide_ms:
        if cache is not None:
            cache.drop()
        cache = _caches[key] = SampleCache.create(spark, slide_ms=slide_ms)
    return cache


def sample_caches_drop() -> None:
    """Forget every cache (the session is being stopped)."""
    for cache in _caches.values():
        cache.drop()
    _caches.clear()
