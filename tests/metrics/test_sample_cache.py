"""Samples kept between runs in the warm session: the same results as a full read."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from spark_jobs.partition_loads import aggregation_execute
from spark_jobs.sample_cache import SampleCache
from tests.metrics.test_transforms import RAW_SCHEMA, record

pytestmark = pytest.mark.spark

W, S = 60_000, 10_000


def topic_rows(rounds: int) -> list[tuple[int, int, bytes]]:
    """Kafka rows of `rounds` sample rounds 10 s apart: partitions 0 and 1 of "orders"
    in metrics-topic partition 0, partition 2 in metrics-topic partition 1."""
    rows, offsets = [], {0: 0, 1: 0}
    for k in range(rounds):
        for partition, kp in ((0, 0), (1, 0), (2, 1)):
            rate = 100 * (partition + 1) * (1 + k // 7)  # the rate changes mid-way
            value = record(
                k * S, partition=partition, end=rate * k, size=rate * k * 10, committed={"g": k}
            )
            rows.append((kp, offsets[kp], value))
            offsets[kp] += 1
    return rows


class Topic:
    """A metrics topic in memory; `extract` reads [start, end) per partition."""

    def __init__(self, spark, rows):
        self.raw = spark.createDataFrame(rows, RAW_SCHEMA)
        self.reads: list[tuple[dict[int, int], dict[int, int]]] = []

    def extract(self, start, end):
        self.reads.append((dict(start), dict(end)))
        cond = F.lit(False)
        for p in start:
            cond = cond | (
                (F.col("partition") == p)
                & (F.col("offset") >= start[p])
                & (F.col("offset") < end[p])
            )
        return self.raw.where(cond)


def ends_after_rounds(rows, rounds: int) -> dict[int, int]:
    """Offsets one past the records of the first `rounds` rounds."""
    ends = {0: 0, 1: 0}
    for kp, offset, _ in rows[: rounds * 3]:
        ends[kp] = offset + 1
    return ends


def comparable(result):
    loads = sorted(
        (r["topic"], r["partition"], r["window_end"], r["samples"], r["bytes_in"], r["bytes_out"])
        for r in result.partition_loads
    )
    brokers = sorted((r["window_end"], r["broker"], r["network_in"]) for r in result.broker_loads)
    return (
        loads,
        brokers,
        result.input_rows,
        result.next_offsets,
        result.finalized_until_ms,
        result.late_rows,
    )


def test_it_gives_what_a_full_read_gives_while_reading_only_the_new_records(spark):
    rows = topic_rows(16)
    topic = Topic(spark, rows)
    cache = SampleCache.create(spark, slide_ms=S)
    start, previous = {0: 0, 1: 0}, None
    windows = 0
    # Runs after 7 rounds, then after every round or two (a run may also end mid-round).
    for rounds in (7, 8, 9, 11, 12, 14, 16):
        end = ends_after_rounds(rows, rounds)
        full = aggregation_execute(
            spark,
            raw=topic.extract(start, end),
            window_ms=W,
            slide_ms=S,
            previous_finalized_ms=previous,
        )
        before = len(topic.reads)
        samples = cache.samples(spark, start=start, end=end, extract=topic.extract)
        kept_end = cache.batches[-1].end if cache.batches else None
        incremental = aggregation_execute(
            spark, samples=samples, window_ms=W, slide_ms=S, previous_finalized_ms=previous
        )

        assert comparable(incremental) == comparable(full)
        # Kafka was read only from where the kept batches ended.
        assert topic.reads[before:] == [(kept_end or start, end)]
        windows += len({r["window_end"] for r in full.partition_loads})
        start = {**end, **full.next_offsets}
        previous = full.finalized_until_ms
        cache.commit(next_start=start)
        # Nothing kept that the next run does not read.
        assert all(any(b.end[p] > start[p] for p in start) for b in cache.batches)
    # Every window that closed, from the first run's first holding two panes on (the
    # samples start at 10 s: windows ending at 30 s ... 150 s).
    assert windows == 13
    cache.drop()


def test_it_reads_everything_again_when_the_kept_batches_miss_a_record(spark):
    rows = topic_rows(9)
    topic = Topic(spark, rows)
    cache = SampleCache.create(spark, slide_ms=S)
    first_end = ends_after_rounds(rows, 7)
    cache.samples(spark, start={0: 0, 1: 0}, end=first_end, extract=topic.extract)
    # The cursor moved past everything kept (e.g. a spark-submit run stored in between).
    cache.commit(next_start=first_end)
    assert cache.batches == []
    end = ends_after_rounds(rows, 9)
    cache.samples(spark, start=first_end, end=end, extract=topic.extract)
    cache.commit(next_start={0: 0, 1: 0})
    # A start below the oldest kept record: a gap, so all of it comes from Kafka.
    samples = cache.samples(spark, start={0: 0, 1: 0}, end=end, extract=topic.extract)

    assert topic.reads[-1] == ({0: 0, 1: 0}, end)
    assert samples.count() == len(rows)
    cache.drop()


def test_it_does_not_trust_batches_of_another_slide_or_a_shorter_topic(spark):
    rows = topic_rows(8)
    topic = Topic(spark, rows)
    cache = SampleCache.create(spark, slide_ms=S)
    end = ends_after_rounds(rows, 7)
    cache.samples(spark, start={0: 0, 1: 0}, end=end, extract=topic.extract)
    cache.commit(next_start={0: 0, 1: 0})

    assert cache.covers(spark, slide_ms=S, start={0: 0, 1: 0}, end=end)
    assert not cache.covers(spark, slide_ms=2 * S, start={0: 0, 1: 0}, end=end)
    # Offsets that went backwards (the topic was recreated): not covered.
    assert not cache.covers(spark, slide_ms=S, start={0: 0, 1: 0}, end={0: 3, 1: 1})
    # A partition the kept batches do not know.
    assert not cache.covers(spark, slide_ms=S, start={0: 0, 1: 0, 2: 0}, end={**end, 2: 5})
    cache.drop()
