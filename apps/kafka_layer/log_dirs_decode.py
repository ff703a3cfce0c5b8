"""DescribeLogDirs answers decoded from the wire straight into replica sizes and log dirs.

kafka-python decodes an answer into one object per log dir, topic and partition: on a
large cluster that is millions of objects and a large share of a sample round's CPU
(bench/bench_sample_round.py). A round keeps one number per replica, so this reads
the bytes once into {(topic, partition): size}, with no object in between, plus one
small record per log dir (path, error, total and usable bytes, and how many of the
sizes are its replicas: which dir holds a replica costs nothing per partition here),
and apart the sizes of future logs (copies between log dirs in progress).

Versions 0-5 (all kafka-python 3.0 speaks; the request pins that range), as in Kafka's
DescribeLogDirsResponse.json:

    ThrottleTimeMs int32, ErrorCode int16 (3+),
    Results [ErrorCode int16, LogDir string,
             Topics [Name string,
                     Partitions [PartitionIndex int32, PartitionSize int64,
                                 OffsetLag int64, IsFutureKey bool]],
             TotalBytes int64 (4+), UsableBytes int64 (4+), IsCordoned bool (5+)]

2+ is "flexible": arrays and strings carry an unsigned varint of length + 1 instead of
int32/int16, and every struct ends with tagged fields (a varint count, then each tag's
number, size and bytes), skipped here as no field this reads is tagged. Anything that
does not parse raises ValueError (kafka-python's parser turns it into its protocol
error), never a wrong size.
"""

from __future__ import annotations

from itertools import islice, repeat
from struct import Struct
from struct import error as StructError
from typing import NamedTuple

MAX_VERSION = 5

_INT16 = Struct(">h").unpack_from
_INT32 = Struct(">i").unpack_from
_THROTTLE_AND_ERROR = Struct(">ih").unpack_from
# A partition of a flexible answer with its tagged-field count, the count almost always 0.
_PARTITION_TAGGED = Struct(">iqq?B").unpack_from
_PARTITION = Struct(">iqq?").unpack_from
_TOTAL_AND_USABLE = Struct(">qq").unpack_from
# A log dir's error code and its path's length (0-1).
_ERROR_AND_LENGTH = Struct(">hh").unpack_from


class LogDir(NamedTuple):
    """One log dir of a broker's answer."""

    path: str
    # 0 when online; KAFKA_STORAGE_ERROR (57) for an offline dir, whose replicas are unknown.
    error_code: int
    # Bytes of the dir's volume, and the free bytes usable by Kafka (4+; None before,
    # and where the broker could not tell: it sends -1, e.g. for an offline dir).
    total_bytes: int | None
    usable_bytes: int | None
    # Its current replicas: this many keys of LogSizes.sizes, in order, after those of
    # the dirs before it (log_dir_of_replicas maps them).
    replicas: int


class LogSizes(NamedTuple):
    """One broker's answer: the sizes of its current replicas, or the request's error."""

    throttle_time_ms: int
    # The request's error (3+: e.g. CLUSTER_AUTHORIZATION_FAILED, with no results).
    error_code: int
    # {(topic, partition): bytes on disk} of the current logs of log dirs that answered;
    # a future log (a move between log dirs in progress) is not the replica's log yet.
    # A log dir that answered with an error (offline) adds nothing: its replicas are
    # unknown, not empty.
    sizes: dict[tuple[str, int], int]
    # Its log dirs in the order the broker listed them.
    dirs: tuple[LogDir, ...] = ()
    # {(topic, partition): bytes} of the future logs of online dirs: the copies of moves
    # between log dirs in progress, as far as each has got (None: not decoded).
    futures: dict[tuple[str, int], int] | None = None


def log_dir_of_replicas(answer: LogSizes) -> dict[tuple[str, int], int]:
    """{(topic, partition): index in answer.dirs} of every current replica in `sizes`,
    built by C loops (zip/islice/repeat) over the keys in the order decoded."""
    keys = iter(answer.sizes)
    placed: dict[tuple[str, int], int] = {}
    for index, log_dir in enumerate(answer.dirs):
        placed.update(zip(islice(keys, log_dir.replicas), repeat(index)))
    return placed


def log_sizes_decode(data: bytes, *, version: int) -> LogSizes:
    """One DescribeLogDirs answer (the bytes after the response header) at `version`."""
    if not 0 <= version <= MAX_VERSION:
        raise ValueError(f"DescribeLogDirs v{version} is not decoded here (0-{MAX_VERSION})")
    try:
        if version >= 2:
            answer, end = _flexible(data, version)
        else:
            answer, end = _classic(data)
    except (IndexError, StructError, UnicodeDecodeError) as exc:
        raise ValueError(f"malformed DescribeLogDirs v{version} answer: {exc}") from exc
    if end != len(data):
        raise ValueError(
            f"malformed DescribeLogDirs v{version} answer: {len(data) - end} bytes left over"
        )
    return answer


def _uvarint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise ValueError("varint longer than 5 bytes")


def _tags_skip(data: bytes, pos: int) -> int:
    count, pos = _uvarint(data, pos)
    for _ in range(count):
        _tag, pos = _uvarint(data, pos)
        size, pos = _uvarint(data, pos)
        pos += size
    if pos > len(data):
        raise IndexError("tagged field past the end")
    return pos


def _string(data: bytes, pos: int, length: int) -> str:
    """`length` bytes at `pos` as UTF-8 ("" for a null string, length -1)."""
    end = pos + max(length, 0)
    if end > len(data):
        raise IndexError("string past the end")
    return str(data[pos:end], "utf-8")


def _length(data: bytes, pos: int) -> tuple[int, int]:
    """A compact array's or string's length (the varint holds length + 1; 0 is null)."""
    byte = data[pos]
    if byte < 0x80:  # one byte: under 127 entries or bytes, as most arrays and names
        return byte - 1, pos + 1
    value, pos = _uvarint(data, pos)
    return value - 1, pos


def _flexible(data: bytes, version: int) -> tuple[LogSizes, int]:
    sizes: dict[tuple[str, int], int] = {}
    futures: dict[tuple[str, int], int] = {}
    dirs: list[LogDir] = []
    if version >= 3:
        throttle, error_code = _THROTTLE_AND_ERROR(data, 0)
        pos = 6
    else:
        (throttle,) = _INT32(data, 0)
        error_code, pos = 0, 4
    results, pos = _length(data, pos)
    for _ in range(results):
        (dir_error,) = _INT16(data, pos)
        length, pos = _length(data, pos + 2)
        path = _string(data, pos, length)
        pos += max(length, 0)
        before = len(sizes)
        topics, pos = _length(data, pos)
        for _ in range(topics):
            length, pos = _length(data, pos)
            end = pos + length
            if end > len(data):
                raise IndexError("topic name past the end")
            name = str(data[pos:end], "utf-8")
            partitions, pos = _length(data, end)
            for _ in range(partitions):
                index, size, _lag, future, tags = _PARTITION_TAGGED(data, pos)
                pos += 22
                if tags:
                    pos = _tags_skip(data, pos - 1)
                if dir_error:
                    continue
                if future:
                    futures[(name, index)] = size
                else:
                    sizes[(name, index)] = size
            pos = _tags_skip(data, pos) if data[pos] else pos + 1
        total = usable = None
        if version >= 4:
            total, usable = _TOTAL_AND_USABLE(data, pos)
            total, usable = (None if total < 0 else total), (None if usable < 0 else usable)
            pos += 16
        if version >= 5:
            pos += 1  # IsCordoned
        pos = _tags_skip(data, pos) if data[pos] else pos + 1
        dirs.append(LogDir(path, dir_error, total, usable, len(sizes) - before))
    pos = _tags_skip(data, pos)
    return LogSizes(throttle, error_code, sizes, tuple(dirs), futures), pos


def _classic(data: bytes) -> tuple[LogSizes, int]:
    sizes: dict[tuple[str, int], int] = {}
    futures: dict[tuple[str, int], int] = {}
    dirs: list[LogDir] = []
    (throttle,) = _INT32(data, 0)
    (results,) = _INT32(data, 4)
    pos = 8
    for _ in range(max(results, 0)):
        dir_error, length = _ERROR_AND_LENGTH(data, pos)
        path = _string(data, pos + 4, length)
        pos += 4 + max(length, 0)
        before = len(sizes)
        (topics,) = _INT32(data, pos)
        pos += 4
        for _ in range(max(topics, 0)):
            (length,) = _INT16(data, pos)
            end = pos + 2 + max(length, 0)
            if end > len(data):
                raise IndexError("topic name past the end")
            name = str(data[pos + 2 : end], "utf-8")
            (partitions,) = _INT32(data, end)
            pos = end + 4
            for _ in range(max(partitions, 0)):
                index, size, _lag, future = _PARTITION(data, pos)
                pos += 21
                if dir_error:
                    continue
                if future:
                    futures[(name, index)] = size
                else:
                    sizes[(name, index)] = size
        dirs.append(LogDir(path, dir_error, None, None, len(sizes) - before))
    return LogSizes(throttle, 0, sizes, tuple(dirs), futures), pos
