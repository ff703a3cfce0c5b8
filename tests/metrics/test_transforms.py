"""The Spark transforms on hand-made samples whose answers are worked out by hand."""

from __future__ import annotations

import json

import pytest
from pyspark.sql.types import BinaryType, IntegerType, LongType, StructField, StructType

from spark_jobs.metrics_schema import metric_record_encode
from spark_jobs.partition_loads import (
    aggregation_execute,
    aggregation_warm_up,
    batch_summary,
    broker_loads_compute,
    partition_loads_compute,
    records_parse,
    window_finalized_until,
    windows_aggregate,
)

pytestmark = pytest.mark.spark

W = 60_000  # window length in ms
RAW_SCHEMA = StructType(
    [
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("value", BinaryType()),
    ]
)


def record(
    ts: int,
    *,
    topic: str = "orders",
    partition: int = 0,
    leader: int = 1,
    replicas: tuple[int, ...] = (1, 2),
    start: int = 0,
    end: int,
    size: int | None,
    committed: dict[str, int] | None = None,
) -> bytes:
    sizes = {} if size is None else {b: size for b in replicas}
    return metric_record_encode(
        ts_ms=ts,
        topic=topic,
        partition=partition,
        leader=leader,
        replicas=list(replicas),
        start_offset=start,
        end_offset=end,
        sizes=sizes,
        committed=committed or {},
    )


def raw_frame(spark, values: list[bytes | None], kafka_partition: int = 0, first_offset: int = 0):
    rows = [(kafka_partition, first_offset + i, v) for i, v in enumerate(values)]
    return spark.createDataFrame(rows, RAW_SCHEMA)


def run(spark, values, previous_finalized_ms=None, **kw):
    return aggregation_execute(
        spark,
        raw=raw_frame(spark, values, **kw),
        window_ms=W,
        previous_finalized_ms=previous_finalized_ms,
    )


def by_partition(result) -> dict[tuple[str, int, int], dict]:
    return {(r["topic"], r["partition"], r["window_start"]): r for r in result.partition_loads}


def steady_window() -> list[bytes]:
    """Six samples 10 s apart in window [60 s, 120 s) plus one that closes it.

    Per 10 s: +500 messages, +50,000 bytes on the leader, group g +200 offsets.
    Over the 50 s from first to last sample: 50 msg/s, 5,000 B/s in, 20 msg/s
    consumed; 350,000 bytes hold 3,500 records = 100 B each, so 2,000 B/s out.
    """
    values = [
        record(
            60_000 + 10_000 * k,
            end=1_000 + 500 * k,
            size=100_000 + 50_000 * k,
            committed={"g": 1_000 + 200 * k},
        )
        for k in range(6)
    ]
    values.append(record(120_000, end=4_000, size=400_000, committed={"g": 2_200}))
    return values


def test_it_computes_rates_over_a_complete_window(spark):
    result = run(spark, steady_window())

    assert result.input_rows == 7
    assert result.malformed_rows == 0
    assert result.finalized_until_ms == 120_000
    loads = by_partition(result)
    assert list(loads) == [("orders", 0, 60_000)]  # [120 s, 180 s) is still open
    load = loads[("orders", 0, 60_000)]
    assert load["samples"] == 6
    assert load["window_end"] == 120_000
    assert load["messages_in"] == pytest.approx(50.0)
    assert load["bytes_in"] == pytest.approx(5_000.0)
    assert load["avg_record_size"] == pytest.approx(100.0)
    assert load["bytes_out"] == pytest.approx(2_000.0)
    assert load["size"] == 350_000
    assert load["leader"] == 1 and load["replicas"] == [1, 2]
    assert load["consumer_groups"] == 1


def test_it_rewinds_to_the_first_record_of_an_open_window(spark):
    result = run(spark, steady_window(), first_offset=100)

    # Offsets 100..105 are the complete window, 106 opens the next one.
    assert result.next_offsets == {0: 106}


def test_it_reads_everything_when_no_window_is_open(spark):
    values = steady_window()[:-1]  # the last sample is at 110 s: window 60 s is open
    result = run(spark, values, first_offset=10)

    assert result.partition_loads == []
    assert result.next_offsets == {0: 10}
    assert result.finalized_until_ms == 60_000


def test_it_uses_offset_growth_when_segments_were_deleted(spark):
    # Retention deleted 500 records between the samples: the leader grew by only
    # 50,000 bytes while 1,000 records of 100 bytes arrived.
    values = [
        record(60_000, start=0, end=1_000, size=100_000),
        record(110_000, start=500, end=2_000, size=150_000),
        record(120_000, start=500, end=2_100, size=160_000),
    ]
    load = by_partition(run(spark, values))[("orders", 0, 60_000)]

    assert load["messages_in"] == pytest.approx(20.0)  # 1,000 records / 50 s
    assert load["avg_record_size"] == pytest.approx(100.0)  # 150,000 B / 1,500 records
    assert load["bytes_in"] == pytest.approx(2_000.0)  # not 50,000 B / 50 s = 1,000


def test_it_sums_consumer_groups_and_ignores_rewinds(spark):
    values = [
        record(60_000, end=1_000, size=100_000, committed={"a": 0, "b": 500, "reset": 900}),
        # "mid" commits only inside the window: not at both ends, so no rate.
        record(70_000, end=1_500, size=150_000, committed={"a": 400, "b": 600, "mid": 50}),
        record(
            80_000, end=2_000, size=200_000, committed={"a": 800, "b": 700, "reset": 20, "late": 5}
        ),
        record(120_000, end=2_000, size=200_000),
    ]
    load = by_partition(run(spark, values))[("orders", 0, 60_000)]

    # a: 800/20 s = 40 msg/s, b: 200/20 s = 10 msg/s, reset rewound: 0; 100 B per record.
    assert load["bytes_out"] == pytest.approx(5_000.0)
    assert load["consumer_groups"] == 3
    assert load["bytes_in"] == pytest.approx(5_000.0)


def test_it_leaves_rates_unknown_with_a_single_sample(spark):
    values = [record(60_000, end=1_000, size=100_000), record(120_000, end=1_000, size=1)]
    load = by_partition(run(spark, values))[("orders", 0, 60_000)]

    assert load["samples"] == 1
    assert load["messages_in"] is None
    assert load["bytes_in"] is None
    assert load["size"] == 100_000


def test_it_counts_and_skips_malformed_records(spark):
    good = steady_window()
    bad: list[bytes | None] = [
        b"not json at all",
        None,  # a tombstone
        b'{"v":1,"topic":"orders","partition":0,"end_offset":5}',  # no ts
        json.dumps(
            {
                "v": 1,
                "ts": 70_000,
                "topic": "orders",
                "partition": 0,
                "start_offset": 10,
                "end_offset": 5,
            }
        ).encode(),  # end before start
        json.dumps(
            {"v": 2, "ts": 70_000, "topic": "orders", "partition": 0, "end_offset": 5}
        ).encode(),  # unknown version
        b'{"v":1,"ts":"yesterday","topic":"orders","partition":0,"end_offset":5}',
        b"\xff\xfe\x00binary",
    ]
    values = good[:3] + bad + good[3:]
    result = run(spark, values)

    assert result.input_rows == len(good) + len(bad)
    assert result.malformed_rows == len(bad)
    load = by_partition(result)[("orders", 0, 60_000)]
    assert load["messages_in"] == pytest.approx(50.0)
    assert load["bytes_in"] == pytest.approx(5_000.0)


def test_it_counts_a_malformed_record_once_even_if_it_is_read_again(spark):
    # The malformed record sits after the start of the open window: the next run
    # reads it again, so this run must not count it.
    values = steady_window() + [b"garbage"]
    result = run(spark, values)

    assert result.next_offsets == {0: 6}
    assert result.malformed_rows == 0


def test_it_drops_records_of_windows_already_written(spark):
    values = [
        record(10_000, end=1, size=1),  # window [0, 60 s) was written by an earlier run
        *steady_window(),
    ]
    result = run(spark, values, previous_finalized_ms=60_000)

    assert result.late_rows == 1
    assert set(by_partition(result)) == {("orders", 0, 60_000)}


def test_it_keeps_the_previous_boundary_when_the_batch_is_older():
    assert window_finalized_until(watermark_ms=None, window_ms=W, previous_ms=120_000) == 120_000
    assert window_finalized_until(watermark_ms=130_000, window_ms=W, previous_ms=None) == 120_000
    assert window_finalized_until(watermark_ms=61_000, window_ms=W, previous_ms=120_000) == 120_000


def test_it_assigns_epoch_aligned_windows(spark):
    samples = records_parse(
        raw_frame(spark, [record(59_999, end=1, size=1), record(60_000, end=1, size=1)]),
        window_ms=W,
    )
    panes = batch_summary(samples, window_ms=W, previous_finalized_ms=None)
    assert sorted((p["window_start"], p["rows"]) for p in panes) == [(0, 1), (60_000, 1)]

    windows = windows_aggregate(samples, ends=[60_000], window_ms=W).collect()
    assert [(r["window_start"], r["window_end"], r["samples"]) for r in windows] == [(0, 60_000, 1)]


def test_it_aggregates_the_due_windows_in_one_shuffle_reduced_map_side(spark):
    samples = records_parse(raw_frame(spark, steady_window()), window_ms=10_000)
    plan = windows_aggregate(samples, ends=[120_000], window_ms=W)._jdf.queryExecution()
    physical = plan.executedPlan().toString()

    assert physical.count("Exchange") == 1
    assert "partial_count" in physical  # samples reduced before the shuffle


def test_it_derives_broker_loads_by_the_load_model(spark):
    # orders-0: replicas [1, 2, 3], leader 1; billing-0: replicas [2, 3], leader 3;
    # billing-1: offline (leader -1), its replicas still count for disk and in.
    rows = [
        ("orders", 0, 0, W, 1, [1, 2, 3], 100.0, 300.0, 1_000),
        ("billing", 0, 0, W, 3, [2, 3], 10.0, 20.0, 50),
        ("billing", 1, 0, W, -1, [3, 1], 7.0, None, 5),
    ]
    pl = spark.createDataFrame(
        rows,
        "topic string, partition int, window_start long, window_end long, leader int, "
        "replicas array<int>, bytes_in double, bytes_out double, size long",
    )
    got = {r["broker"]: r.asDict() for r in broker_loads_compute(pl).collect()}

    assert got[1]["network_in"] == 107.0
    assert got[1]["network_out"] == 300.0 + 100.0 * 2
    assert got[1]["disk"] == 1_005
    assert (got[1]["replicas"], got[1]["leaders"]) == (2, 1)
    assert "topic_replicas" not in got[1]  # never read: not collected

    assert got[2]["network_in"] == 110.0
    assert got[2]["network_out"] == 0.0
    assert got[2]["disk"] == 1_050
    assert (got[2]["replicas"], got[2]["leaders"]) == (2, 0)

    assert got[3]["network_in"] == 117.0
    assert got[3]["network_out"] == 20.0 + 10.0 * 1
    assert got[3]["disk"] == 1_055
    assert (got[3]["replicas"], got[3]["leaders"]) == (3, 1)
    assert {r["window_start"] for r in got.values()} == {0}


def test_it_takes_the_largest_replica_when_the_leader_size_is_unknown(spark):
    values = [
        metric_record_encode(
            ts_ms=ts,
            topic="t",
            partition=3,
            leader=2,
            replicas=[2, 1],
            start_offset=0,
            end_offset=end,
            sizes={1: size},
            committed={},
        )
        for ts, end, size in ((60_000, 100, 10_000), (90_000, 400, 40_000), (120_000, 400, 0))
    ]
    windows = windows_aggregate(
        records_parse(raw_frame(spark, values), window_ms=W), ends=[120_000], window_ms=W
    )
    load = partition_loads_compute(windows).collect()[0]

    assert load["messages_in"] == pytest.approx(10.0)
    # No leader size: neither growth nor an average record size to use.
    assert load["bytes_in"] is None
    assert load["size"] == 40_000


S = 10_000  # slide in ms


def ramp(ts_list, *, rate_from_ms: int = 10**12, partition: int = 0) -> list[bytes]:
    """Samples at `ts_list`: 10 B/s until `rate_from_ms`, 1,000 B/s after."""
    values, size = [], 0
    prev = ts_list[0]
    for ts in ts_list:
        size += (ts - prev) // 1000 * (1_000 if ts > rate_from_ms else 10)
        prev = ts
        values.append(record(ts, partition=partition, end=size // 10, size=size))
    return values


def test_a_first_run_stores_the_first_window_holding_two_samples(spark):
    # A fresh start: samples at 10, 20 and 30 s. The window ending at 30 s holds the
    # first two (the one at 30 s closes it): stored, with a rate, not 60 s later.
    result = aggregation_execute(
        spark,
        raw=raw_frame(spark, ramp([S, 2 * S, 3 * S])),
        window_ms=W,
        slide_ms=S,
        previous_finalized_ms=None,
    )

    assert result.finalized_until_ms == 3 * S
    [load] = result.partition_loads
    assert (load["window_start"], load["window_end"], load["samples"]) == (3 * S - W, 3 * S, 2)
    assert load["bytes_in"] is not None and load["bytes_in"] > 0
    leader = next(b for b in result.broker_loads if b["broker"] == load["leader"])
    assert leader["network_in"] == load["bytes_in"]


def test_the_warm_up_runs_the_whole_job(spark):
    assert aggregation_warm_up(spark, window_ms=W, slide_ms=S) == 1


def test_it_stores_each_window_that_closed_when_windows_slide(spark):
    # Samples every 10 s from 0 to 130 s: the first run composes one window length
    # of them, the windows ending at 80 s ... 130 s.
    result = aggregation_execute(
        spark,
        raw=raw_frame(spark, ramp(list(range(0, 130_001, S)))),
        window_ms=W,
        slide_ms=S,
        previous_finalized_ms=None,
    )

    assert result.finalized_until_ms == 130_000
    ends = sorted(r["window_end"] for r in result.partition_loads)
    assert ends == [80_000, 90_000, 100_000, 110_000, 120_000, 130_000]
    load = next(r for r in result.partition_loads if r["window_end"] == 130_000)
    assert load["window_start"] == 70_000
    assert load["samples"] == 6  # 70 s ... 120 s; the sample at 130 s closes it
    assert load["bytes_in"] == pytest.approx(10.0)
    # The next window, ending at 140 s, needs the panes from 80 s on.
    assert result.next_offsets == {0: 8}


def test_it_shows_a_skew_in_the_next_slide_not_the_next_window(spark):
    # Traffic jumps to 1,000 B/s at 95 s. The previous run wrote windows up to 100 s.
    samples = ramp(list(range(0, 120_001, S)), rate_from_ms=95_000)
    result = aggregation_execute(
        spark,
        raw=raw_frame(spark, samples[5:], first_offset=5),
        window_ms=W,
        slide_ms=S,
        previous_finalized_ms=100_000,
    )

    loads = {r["window_end"]: r for r in result.partition_loads}
    assert sorted(loads) == [110_000, 120_000]
    # [60 s, 120 s): first sample 60 s, last 110 s; the samples at 100 s and 110 s
    # each add 10 s at 1,000 B/s: (10 x 30 s + 1,000 x 20 s) / 50 s.
    assert loads[120_000]["bytes_in"] == pytest.approx((300 + 20_000) / 50)
    assert result.late_rows == 0


def test_it_measures_a_partition_that_appears_mid_window_from_its_own_samples(spark):
    old = ramp(list(range(0, 70_001, S)))
    new = [
        record(
            ts,
            partition=1,
            end=3_000 * (ts - 40_000) // 1000,
            size=3_000_000 * (ts - 40_000) // 1000,
        )
        for ts in (40_000, 50_000, 60_000, 70_000)
    ]
    result = aggregation_execute(
        spark,
        raw=raw_frame(spark, old + new),
        window_ms=W,
        slide_ms=S,
        previous_finalized_ms=60_000,
    )

    load = by_partition(result)[("orders", 1, 10_000)]
    assert load["samples"] == 3
    assert load["bytes_in"] == pytest.approx(3_000_000.0)


def test_it_refuses_a_window_that_is_not_a_multiple_of_the_slide(spark):
    with pytest.raises(ValueError, match="multiple of the slide"):
        aggregation_execute(
            spark, raw=raw_frame(spark, []), window_ms=W, slide_ms=7_000, previous_finalized_ms=None
        )
