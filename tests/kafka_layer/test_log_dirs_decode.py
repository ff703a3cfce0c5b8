"""DescribeLogDirs answers decoded from the wire: the same sizes kafka-python's own
decoder reads, at every version it speaks, and an error for anything that does not
parse."""

from __future__ import annotations

import random
import struct

import pytest
from kafka.protocol.admin.cluster import DescribeLogDirsResponse as Response

from apps.kafka_layer.log_dirs_decode import (
    MAX_VERSION,
    LogDir,
    log_dir_of_replicas,
    log_sizes_decode,
)

Result = Response.DescribeLogDirsResult
Topic = Result.DescribeLogDirsTopic
Part = Topic.DescribeLogDirsPartition


def _random_answer(rng: random.Random, version: int) -> bytes:
    results = []
    for d in range(rng.randint(0, 3)):
        topics = []
        for _ in range(rng.randint(0, 150)):  # past 127: two-byte lengths when flexible
            name = rng.choice(["orders", "événements", "t" * rng.randint(1, 200)])
            name += f"-{rng.randint(0, 10**6)}"
            topics.append(
                Topic(
                    name=name,
                    partitions=[
                        Part(
                            partition_index=index,
                            partition_size=rng.randint(0, 2**50),
                            offset_lag=rng.randint(0, 10),
                            is_future_key=rng.random() < 0.1,
                        )
                        for index in range(rng.randint(0, 140))
                    ],
                )
            )
        results.append(
            Result(
                error_code=rng.choice([0, 0, 0, 57]),  # 57: KAFKA_STORAGE_ERROR, offline
                log_dir=f"/var/lib/kafka/{d}",
                total_bytes=rng.choice([-1, rng.randint(0, 2**40)]),
                usable_bytes=rng.choice([-1, rng.randint(0, 2**40)]),
                topics=topics,
            )
        )
    response = Response(
        version=version,
        throttle_time_ms=rng.randint(0, 100),
        error_code=rng.choice([0, 0, 31]),
        results=results,
    )
    return bytes(response.encode(version=version))


def _known(value: int) -> int | None:
    return None if value < 0 else value


def _as_kafka_python_reads_it(wire: bytes, version: int) -> tuple:
    """(throttle, error, sizes, dirs, futures, {replica: index of its dir}) from
    kafka-python's objects."""
    answer = Response.decode(wire, version=version)
    sizes, dirs, placed, futures = {}, [], {}, {}
    for d, log_dir in enumerate(answer.results):
        count = 0
        for topic in log_dir.topics:
            for p in topic.partitions:
                if not log_dir.error_code and p.is_future_key:
                    futures[(topic.name, p.partition_index)] = p.partition_size
                if not log_dir.error_code and not p.is_future_key:
                    key = (topic.name, p.partition_index)
                    count += key not in sizes
                    sizes[key] = p.partition_size
                    placed.setdefault(key, d)
        total = _known(log_dir.total_bytes) if version >= 4 else None
        usable = _known(log_dir.usable_bytes) if version >= 4 else None
        dirs.append(LogDir(log_dir.log_dir, log_dir.error_code, total, usable, count))
    error_code = answer.error_code if version >= 3 else 0
    return answer.throttle_time_ms, error_code, sizes, tuple(dirs), futures, placed


@pytest.mark.parametrize("version", range(MAX_VERSION + 1))
def test_it_reads_what_kafka_python_reads(version):
    rng = random.Random(version)
    for _ in range(8):
        wire = _random_answer(rng, version)

        decoded = log_sizes_decode(wire, version=version)

        assert (*decoded, log_dir_of_replicas(decoded)) == _as_kafka_python_reads_it(wire, version)


def test_it_reads_each_log_dir_and_the_dir_of_each_replica():
    def part(index, size, future=False):
        return Part(partition_index=index, partition_size=size, offset_lag=0, is_future_key=future)

    results = [
        Result(
            error_code=0,
            log_dir="/disks/a",
            total_bytes=1000,
            usable_bytes=600,
            topics=[Topic(name="orders", partitions=[part(0, 10), part(1, 11, future=True)])],
        ),
        Result(
            error_code=0,
            log_dir="/disks/b",
            total_bytes=2000,
            usable_bytes=1500,
            topics=[Topic(name="orders", partitions=[part(1, 12), part(2, 13)])],
        ),
        Result(error_code=57, log_dir="/disks/c", total_bytes=-1, usable_bytes=-1, topics=[]),
    ]
    wire = bytes(
        Response(version=4, throttle_time_ms=0, error_code=0, results=results).encode(version=4)
    )

    decoded = log_sizes_decode(wire, version=4)

    assert decoded.dirs == (
        LogDir("/disks/a", 0, 1000, 600, 1),
        LogDir("/disks/b", 0, 2000, 1500, 2),
        LogDir("/disks/c", 57, None, None, 0),
    )
    # orders-1's future copy on /disks/a is not where the replica is.
    assert log_dir_of_replicas(decoded) == {("orders", 0): 0, ("orders", 1): 1, ("orders", 2): 1}
    # ... it is the copy of a move between dirs, as far as it has got.
    assert decoded.futures == {("orders", 1): 11}


def test_it_skips_tagged_fields_it_does_not_know():
    one = Topic(
        name="orders",
        partitions=[Part(partition_index=3, partition_size=77, offset_lag=0, is_future_key=False)],
    )
    result = Result(error_code=0, log_dir="/d", total_bytes=1, usable_bytes=1, topics=[one])
    wire = bytes(
        Response(version=4, throttle_time_ms=0, error_code=0, results=[result]).encode(version=4)
    )
    partition = struct.pack(">iqq?", 3, 77, 0, False) + b"\x00"
    assert wire.count(partition) == 1
    # The partition's tagged fields: one, tag 9, two bytes; and a second partition after.
    tagged = struct.pack(">iqq?", 3, 77, 0, False) + b"\x01\x09\x02ab"
    second = struct.pack(">iqq?", 4, 5, 0, False) + b"\x00"
    wire = wire.replace(b"\x02" + partition, b"\x03" + tagged + second)  # 2 partitions + 1

    assert log_sizes_decode(wire, version=4).sizes == {("orders", 3): 77, ("orders", 4): 5}


@pytest.mark.parametrize("version", [1, 4])
def test_it_refuses_what_does_not_parse(version):
    wire = _random_answer(random.Random(7), version)
    assert len(wire) > 100

    for broken in (wire[:-1], wire[: len(wire) // 2], wire + b"\x00", b""):
        with pytest.raises(ValueError, match="malformed DescribeLogDirs"):
            log_sizes_decode(broken, version=version)
    with pytest.raises(ValueError, match="v6 is not decoded"):
        log_sizes_decode(wire, version=6)
