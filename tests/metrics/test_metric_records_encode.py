"""The sampler's bulk record encoder writes what json.dumps writes for each record."""

from __future__ import annotations

import json

from spark_jobs.metrics_schema import METRIC_RECORD_VERSION, metric_records_encode

# (topic, partition, leader, replicas, start, end, sizes of its replicas, committed)
ROWS = [
    ("orders", 0, 1, [1, 2], 5, 50, {1: 4_500, 2: 4_400}, {"g": 40, 'a "quoted" gr\u00fcp': 7}),
    ("x.y_z-1", 12, -1, [3], 0, 0, {}, {}),
    ("t", 3, 2, [2, 1, 3], 2**40, 2**41, {3: 0}, {}),
]


def _encoded(ts_ms: int, rows: list) -> list[tuple[bytes, bytes]]:
    """Encode `rows` with their sizes given by broker, as the sampler reads them, plus a
    log left on a broker (9) each partition moved off, which is not the partition's."""
    by_broker: dict[int, dict[tuple[str, int], int]] = {9: {}}
    for topic, partition, *_, sizes, _committed in rows:
        by_broker[9][(topic, partition)] = 123
        for broker, size in sizes.items():
            by_broker.setdefault(broker, {})[(topic, partition)] = size
    plain = [(t, p, leader, r, s, e, c) for t, p, leader, r, s, e, _sizes, c in rows]
    return metric_records_encode(ts_ms=ts_ms, rows=plain, sizes=by_broker)


def _as_json_dumps_writes(ts_ms: int, rows: list) -> list[tuple[bytes, bytes]]:
    return [
        (
            f"{topic}-{partition}".encode(),
            json.dumps(
                {
                    "v": METRIC_RECORD_VERSION,
                    "ts": ts_ms,
                    "topic": topic,
                    "partition": partition,
                    "leader": leader,
                    "replicas": replicas,
                    "start_offset": start,
                    "end_offset": end,
                    "sizes": {str(b): s for b, s in sizes.items()},
                    "committed": committed,
                },
                separators=(",", ":"),
            ).encode(),
        )
        for topic, partition, leader, replicas, start, end, sizes, committed in rows
    ]


def test_it_encodes_each_row_as_json_dumps_would():
    assert _encoded(1_700_000_000_123, ROWS) == _as_json_dumps_writes(1_700_000_000_123, ROWS)


def test_the_one_shot_encoder_leaves_out_brokers_that_did_not_answer():
    rows = [(t, p, leader, r, s, e, c) for t, p, leader, r, s, e, _sizes, c in ROWS]
    records = metric_records_encode(ts_ms=5, rows=rows, sizes={1: {("orders", 0): 4_500}})

    assert [json.loads(value)["sizes"] for _key, value in records] == [{"1": 4_500}, {}, {}]
