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
from collections.abc import Iterable, Mapping

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


# (topic, partition, leader, replicas, start_offset, end_offset, committed)
MetricRow = tuple[str, int, int, list[int], int, int, dict[str, int]]
# Bytes on disk of each replica, by broker: {broker: {(topic, partition): size}}, as
# DescribeLogDirs answers come (one per broker).
ReplicaSizes = Mapping[int, Mapping[tuple[str, int], int]]


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
    """One record's value; `sizes` by broker, of this partition only."""
    row = (topic, partition, leader, replicas, start_offset, end_offset, committed)
    by_broker = {broker: {(topic, partition): size} for broker, size in sizes.items()}
    return metric_records_encode(ts_ms=ts_ms, rows=[row], sizes=by_broker)[0][1]


def metric_records_encode(
    *, ts_ms: int, rows: Iterable[MetricRow], sizes: ReplicaSizes
) -> list[tuple[bytes, bytes]]:
    """(key, value) of each row, values exactly as `json.dumps(record, separators=(",",
    ":"))` writes them, without building a dict per record (a sample round encodes one
    per partition, which through json.dumps is a large share of its CPU).

    A record's `sizes` are its current replicas' sizes found in `sizes`, in replica
    order: a log left on a broker the partition moved off, until it is deleted, is not
    the partition's; a broker that did not answer is left out.
    """
    dumps = json.dumps
    quoted: dict[str, str] = {}  # names as JSON strings, once per topic
    head = f'{{"v":{METRIC_RECORD_VERSION},"ts":{ts_ms},"topic":'
    none: Mapping[tuple[str, int], int] = {}
    out: list[tuple[bytes, bytes]] = []
    append = out.append
    for topic, partition, leader, replicas, start, end, committed in rows:
        tp = (topic, partition)
        name = quoted.get(topic)
        if name is None:
            name = quoted[topic] = dumps(topic)
        known = []
        for broker in replicas:
            size = sizes.get(broker, none).get(tp)
            if size is not None:
                known.append(f'"{broker}":{size}')
        committed_text = dumps(committed, separators=(",", ":")) if committed else "{}"
        append(
            (
                f"{topic}-{partition}".encode(),
                (
                    f'{head}{name},"partition":{partition},"leader":{leader},'
                    f'"replicas":[{",".join(map(str, replicas))}],"start_offset":{start},'
                    f'"end_offset":{end},"sizes":{{{",".join(known)}}},'
                    f'"committed":{committed_text}}}'
                ).encode(),
            )
        )
    return out
