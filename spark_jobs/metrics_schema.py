"""The metric record the sampler publishes and the aggregation job reads.

One record per partition per sample round, on the metrics topic
(settings.METRICS_TOPIC, `__balancer_metrics` by default) of the cluster it
describes.

Key: `"<topic>-<partition>"` (UTF-8), so all samples of one partition land in one
metrics-topic partition, in order.

Value: UTF-8 JSON object, schema version 1:

- `v` (int): schema version, 1
- `ts` (int): sample time in ms since the epoch (UTC); the same for every record
  of one sample round
- `topic` (string), `partition` (int): the partition described
- `leader` (int): leader node id, -1 when offline
- `replicas` ([int]): replica node ids, preferred leader first
- `start_offset` (int): log-start offset (earliest)
- `end_offset` (int): log-end offset (latest, i.e. the high watermark)
- `sizes` ({string: int}): bytes on disk per replica, keyed by node id as a
  string; a broker that did not answer is absent
- `committed` ({string: int}): committed offset per consumer group that has one
  for this partition

A record that is not valid JSON, lacks `ts`/`topic`/`partition`/`end_offset`, or has
negative offsets or `end_offset < start_offset` is malformed: the job counts it
and skips it.
"""

from __future__ import annotations

import json
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

METRIC_RECORD_VERSION = 1

METRIC_RECORD_SCHEMA = StructType(
    [
        StructField("v", IntegerType()),
        StructField("ts", LongType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("leader", IntegerType()),
        StructField("replicas", ArrayType(IntegerType())),
        StructField("start_offset", LongType()),
        StructField("end_offset", LongType()),
        StructField("sizes", MapType(StringType(), LongType())),
        StructField("committed", MapType(StringType(), LongType())),
    ]
)


def metric_key_encode(*, topic: str, partition: int) -> bytes:
    return f"{topic}-{partition}".encode()


def metric_record_encode(
    *,
    ts_ms: int,
    topic: str,
    partition: int,
    leader: int,
    replicas: list[int],
    start_offset: int,
    end_offset: int,
    sizes: dict[int, int],
    committed: dict[str, int],
) -> bytes:
    record: dict[str, Any] = {
        "v": METRIC_RECORD_VERSION,
        "ts": ts_ms,
        "topic": topic,
        "partition": partition,
        "leader": leader,
        "replicas": replicas,
        "start_offset": start_offset,
        "end_offset": end_offset,
        "sizes": {str(broker): size for broker, size in sizes.items()},
        "committed": committed,
    }
    return json.dumps(record, separators=(",", ":")).encode()
