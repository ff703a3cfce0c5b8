"""The sampler's bulk record encoder writes what json.dumps writes for each record."""

from __future__ import annotations

import json

from spark_jobs.metrics_schema import METRIC_RECORD_VERSION, metric_records_encode

ROWS = [
    ("orders", 0, 1, [1, 2], 5, 50, {1: 4_500, 2: 4_400}, {"g": 40, 'a "quoted" gr\u00fcp': 7}),
    ("x.y_z-1", 12, -1, [3], 0, 0, {}, {}),
    ("t", 3, 2, [2, 1, 3], 2**40, 2**41, {3: 0}, {}),
]


def test_it_encodes_each_row_as_json_dumps_would():
    records = metric_records_encode(ts_ms=1_700_000_000_123, rows=ROWS)

    expected = [
        (
            f"{topic}-{partition}".encode(),
            json.dumps(
                {
                    "v": METRIC_RECORD_VERSION,
                    "ts": 1_700_000_000_123,
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
        for topic, partition, leader, replicas, start, end, sizes, committed in ROWS
    ]
    assert records == expected
