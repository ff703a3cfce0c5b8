"""One topic's partition loads of one window packed into one compact value, kept on its
TopicLoad row, and the topic's per-broker traffic packed likewise. No Django.

A window is then one row of a few kilobytes per topic rather than a row per partition
with a JSON column, which would make storing a window slow and grow the database by
much more a window (BALANCING.md §1 for the loads' meaning).

Partition loads (`loads_pack`), little-endian, columns one after the other, n partitions
sorted by index and R replicas in all:

    int32   n
    int32   partition[n]
    int32   samples[n]
    int32   leader[n]            INT32_MIN: none
    int32   consumer_groups[n]
    int32   replica_count[n]
    int32   replicas[R]          each partition's replicas in order, concatenated
    float64 messages_in[n]       NaN: not measured (null)
    float64 bytes_in[n]          NaN: null
    float64 bytes_out[n]         NaN: null
    float64 avg_record_size[n]   NaN: null
    int64   size[n]              INT64_MIN: null

Readers get None for every null, as they did from the partition rows. Per-broker
traffic (`brokers_pack`): int32 n, int32 broker[n] sorted, float64 in[n], float64 out[n].

Unpacking gives plain tuples, not named tuples or dicts: on a large cluster an object
per partition costs a good part of the snapshot's time.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterable, Sequence

INT32_NULL = -(2**31)
INT64_NULL = -(2**63)

# One partition's load, in the order `loads_pack` takes and `loads_unpack` gives:
# (partition, samples, leader, replicas, messages_in, bytes_in, bytes_out, size,
#  avg_record_size, consumer_groups)
LoadRow = tuple[
    int, int, int | None, list[int], float | None, float | None, float | None, int | None,
    float | None, int,
]  # fmt: skip
FIELDS = (
    "partition",
    "samples",
    "leader",
    "replicas",
    "messages_in",
    "bytes_in",
    "bytes_out",
    "size",
    "avg_record_size",
    "consumer_groups",
)
_BIG = sys.byteorder == "big"


def _bytes(values: array) -> bytes:
    if _BIG:
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _floats(values: Iterable[float | None]) -> array:
    return array("d", [math.nan if v is None else v for v in values])


def loads_pack(*, rows: Iterable[Sequence]) -> bytes:
    """Rows in LoadRow order (any order of partitions; one row per partition)."""
    rows = sorted(rows, key=lambda r: r[0])
    replicas = [r[3] or () for r in rows]
    parts = [
        array("i", [len(rows)]),
        array("i", [r[0] for r in rows]),
        array("i", [r[1] for r in rows]),
        array("i", [INT32_NULL if r[2] is None else r[2] for r in rows]),
        array("i", [r[9] for r in rows]),
        array("i", [len(r) for r in replicas]),
        array("i", [b for r in replicas for b in r]),
        _floats(r[4] for r in rows),
        _floats(r[5] for r in rows),
        _floats(r[6] for r in rows),
        _floats(r[8] for r in rows),
        array("q", [INT64_NULL if r[7] is None else r[7] for r in rows]),
    ]
    return b"".join(_bytes(p) for p in parts)


class _Reader:
    def __init__(self, packed: bytes) -> None:
        self.data = memoryview(bytes(packed))
        self.at = 0

    def take(self, typecode: str, count: int) -> array:
        values = array(typecode)
        end = self.at + values.itemsize * count
        values.frombytes(self.data[self.at : end])
        if _BIG:
            values.byteswap()
        self.at = end
        return values


def _nullable_floats(values: array) -> list[float | None]:
    return [v if v == v else None for v in values.tolist()]  # NaN != NaN


def loads_columns_unpack(*, packed: bytes, fields: Sequence[str] = FIELDS) -> dict[str, list]:
    """The `fields` asked for, each as a list (None for nulls; replicas as one list per
    partition); the others are skipped, not decoded."""
    if not packed:
        return {name: [] for name in fields}
    wanted = set(fields)
    reader = _Reader(packed)
    n = reader.take("i", 1)[0]
    partition, samples, leader, groups, counts = (reader.take("i", n) for _ in range(5))
    flat = reader.take("i", sum(counts))
    columns: dict[str, list] = {}
    if "replicas" in wanted:
        flat_list, replicas, at = flat.tolist(), [], 0
        for c in counts.tolist():
            replicas.append(flat_list[at : at + c])
            at += c
        columns["replicas"] = replicas
    for name in ("messages_in", "bytes_in", "bytes_out", "avg_record_size"):
        values = reader.take("d", n)
        if name in wanted:
            columns[name] = _nullable_floats(values)
    if "size" in wanted:
        columns["size"] = [None if v == INT64_NULL else v for v in reader.take("q", n).tolist()]
    if "leader" in wanted:
        columns["leader"] = [None if v == INT32_NULL else v for v in leader.tolist()]
    ints = (("partition", partition), ("samples", samples), ("consumer_groups", groups))
    for name, values in ints:
        if name in wanted:
            columns[name] = values.tolist()
    return columns


def loads_unpack(*, packed: bytes) -> list[LoadRow]:
    """One LoadRow per partition, sorted by partition."""
    columns = loads_columns_unpack(packed=packed)
    return list(zip(*(columns[name] for name in FIELDS), strict=True))


def brokers_pack(*, into: dict[int, float], out: dict[int, float]) -> bytes:
    """A topic's bytes in and out per broker; a broker in only one of them reads 0 in
    the other."""
    brokers = sorted(set(into) | set(out))
    return b"".join(
        _bytes(p)
        for p in (
            array("i", [len(brokers)]),
            array("i", brokers),
            array("d", [into.get(b, 0.0) for b in brokers]),
            array("d", [out.get(b, 0.0) for b in brokers]),
        )
    )


def brokers_unpack(*, packed: bytes) -> tuple[dict[int, float], dict[int, float]]:
    """(bytes in, bytes out) per broker."""
    if not packed:
        return {}, {}
    reader = _Reader(packed)
    n = reader.take("i", 1)[0]
    brokers = reader.take("i", n).tolist()
    into = reader.take("d", n).tolist()
    out = reader.take("d", n).tolist()
    return dict(zip(brokers, into, strict=True)), dict(zip(brokers, out, strict=True))
