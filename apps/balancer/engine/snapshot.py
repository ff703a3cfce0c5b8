"""Parse and validate a cluster snapshot (BALANCING.md §1) into numpy arrays.

Brokers are sorted by id and partitions by (topic, partition) so that the same
snapshot always yields the same arrays, whatever order the JSON listed them in.
Every problem is reported as a one-line `SnapshotError` naming the culprit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from apps.core.bounds import INT32_MAX

from .errors import SnapshotError
from .snapshot_input import LOAD_KEYS, ClusterSnapshot, SnapshotPartition

CAPACITY_KEYS = ("network_in", "network_out", "disk")


@dataclass
class Snapshot:
    """A validated snapshot. Broker references are indices into `broker_ids`."""

    cluster: str | None
    taken_at: str | None
    broker_ids: np.ndarray  # (B,) int64, sorted
    racks: list[str | None]  # (B,)
    alive: np.ndarray  # (B,) bool
    capacity: np.ndarray  # (B, 3) float64, NaN where not given (= unbounded)
    topics: list[str]  # sorted topic names
    topic: np.ndarray  # (P,) int32 index into `topics`
    partition: np.ndarray  # (P,) int64 partition number
    replicas: np.ndarray  # (P, K) int32 broker index, -1 padding; column 0 = preferred leader
    rf: np.ndarray  # (P,) int32 replica count
    leader: np.ndarray  # (P,) int32 broker index of the current leader, -1 offline
    bytes_in: np.ndarray  # (P,) float64
    bytes_out: np.ndarray  # (P,) float64
    messages_in: np.ndarray  # (P,) float64
    size: np.ndarray  # (P,) float64

    @property
    def n_brokers(self) -> int:
        return int(self.broker_ids.shape[0])

    @property
    def n_partitions(self) -> int:
        return int(self.topic.shape[0])

    def partition_name(self, p: int) -> str:
        return f"{self.topics[self.topic[p]]}-{int(self.partition[p])}"

    def broker_index(self, broker_id: int) -> int | None:
        i = int(np.searchsorted(self.broker_ids, broker_id))
        if i < self.n_brokers and int(self.broker_ids[i]) == broker_id:
            return i
        return None


def _is_int(value: Any) -> bool:
    return type(value) is int  # bool is an int subclass and must not pass


def _number(value: Any, where: str) -> float:
    if type(value) not in (int, float):
        raise SnapshotError(f"{where} must be a number, got {value!r}")
    try:
        x = float(value)
    except OverflowError:
        x = math.inf  # an integer past any float: refused below as not finite
    if not math.isfinite(x) or x < 0:
        raise SnapshotError(f"{where} must be a finite number >= 0, got {value!r}")
    return x


def _parse_brokers(raw: Any) -> tuple[list[int], list[str | None], list[bool], list[list[float]]]:
    if not isinstance(raw, list):
        raise SnapshotError("snapshot field 'brokers' must be a list")
    if not raw:
        raise SnapshotError("snapshot has no brokers")
    rows = []
    seen: set[int] = set()
    for i, b in enumerate(raw):
        if not isinstance(b, Mapping):
            raise SnapshotError(f"brokers[{i}] must be an object")
        bid = b.get("id")
        if not _is_int(bid) or not 0 <= bid <= INT32_MAX:  # -1 means "no leader"
            raise SnapshotError(
                f"brokers[{i}]: 'id' must be an integer from 0 to {INT32_MAX}, got {bid!r}"
            )
        if bid in seen:
            raise SnapshotError(f"broker {bid} is listed twice")
        seen.add(bid)
        rack = b.get("rack")
        if rack is not None and not isinstance(rack, str):
            raise SnapshotError(f"broker {bid}: 'rack' must be a string or null, got {rack!r}")
        alive = b.get("alive", True)
        if not isinstance(alive, bool):
            raise SnapshotError(f"broker {bid}: 'alive' must be true or false, got {alive!r}")
        cap = b.get("capacity")
        caps = [math.nan] * 3
        if cap is not None:
            if not isinstance(cap, Mapping):
                raise SnapshotError(f"broker {bid}: 'capacity' must be an object")
            for j, key in enumerate(CAPACITY_KEYS):
                if cap.get(key) is not None:
                    caps[j] = _number(cap[key], f"broker {bid}: capacity.{key}")
        rows.append((bid, rack, alive, caps))
    rows.sort(key=lambda r: r[0])
    return (
        [r[0] for r in rows],
        [r[1] for r in rows],
        [r[2] for r in rows],
        [r[3] for r in rows],
    )


def parse_snapshot(data: Any) -> Snapshot:
    """Validate `data` (a `ClusterSnapshot`, or the decoded JSON) and return a `Snapshot`."""
    if isinstance(data, Snapshot):
        return data
    if isinstance(data, ClusterSnapshot):
        cluster, taken_at = data.cluster, data.taken_at
        raw_brokers: Any = [b.as_json() for b in data.brokers]  # a few: one validator
    elif isinstance(data, Mapping):
        cluster = data.get("cluster") if isinstance(data.get("cluster"), str) else None
        taken_at = data.get("taken_at") if isinstance(data.get("taken_at"), str) else None
        raw_brokers = data.get("brokers")
    else:
        raise SnapshotError("snapshot must be a JSON object")
    ids, racks, alive, caps = _parse_brokers(raw_brokers)
    index = {bid: i for i, bid in enumerate(ids)}
    if isinstance(data, ClusterSnapshot):
        parsed = _parse_typed_partitions(data.partitions, index)
    else:
        parts = data.get("partitions")
        if not isinstance(parts, list):
            raise SnapshotError("snapshot field 'partitions' must be a list")
        parsed = _parse_partitions(parts, index)
    topic_names, numbers, rep_lists, leaders, loads, maxrf = parsed
    topics, topic_arr, numbers, order = _sort_partitions(topic_names, numbers)
    replicas, rf = _replica_matrix(rep_lists, maxrf, order)
    loads = loads[order]
    return Snapshot(
        cluster=cluster,
        taken_at=taken_at,
        broker_ids=np.asarray(ids, dtype=np.int64),
        racks=racks,
        alive=np.asarray(alive, dtype=bool),
        capacity=np.asarray(caps, dtype=np.float64).reshape(len(ids), 3),
        topics=topics,
        topic=topic_arr,
        partition=numbers,
        replicas=replicas,
        rf=rf,
        leader=leaders[order],
        bytes_in=np.ascontiguousarray(loads[:, 0]),
        bytes_out=np.ascontiguousarray(loads[:, 1]),
        messages_in=np.ascontiguousarray(loads[:, 2]),
        size=np.ascontiguousarray(loads[:, 3]),
    )


_Parsed = tuple[list[str], np.ndarray, list[list[int]], np.ndarray, np.ndarray, int]


def _columns(
    n: int,
) -> tuple[list[str], np.ndarray, list[list[int]], np.ndarray, np.ndarray]:
    """Empty per-partition columns: topic names, numbers, replica rows, leaders (-1),
    loads (n, 4)."""
    return (
        [""] * n,
        np.zeros(n, dtype=np.int64),
        [[]] * n,
        np.full(n, -1, dtype=np.int32),
        np.zeros((n, 4), dtype=np.float64),
    )


def _parse_typed_partitions(parts: list[SnapshotPartition], index: dict[int, int]) -> _Parsed:
    """As `_parse_partitions`, for typed partitions: their field types are the
    producer's; what a type cannot say (known, distinct replicas; the leader one of
    them; finite loads >= 0) is checked here the same way."""
    topic_names, numbers, rep_lists, leaders, loads = _columns(len(parts))
    maxrf = 1
    for i, p in enumerate(parts):
        topic, num, reps = p.topic, p.partition, p.replicas
        if not topic or num < 0 or not reps:
            raise SnapshotError(f"partition {topic}-{num}: needs a topic, a number >= 0, replicas")
        row = [index.get(r, -1) for r in reps]
        if -1 in row:
            raise SnapshotError(f"partition {topic}-{num}: replicas {reps} name an unknown broker")
        if len(set(row)) != len(row):
            raise SnapshotError(f"partition {topic}-{num}: replicas {reps} are not distinct")
        if len(row) > maxrf:
            maxrf = len(row)
        if p.leader != -1:
            if p.leader not in reps:
                raise SnapshotError(
                    f"partition {topic}-{num}: leader {p.leader} is not one of its replicas {reps}"
                )
            leaders[i] = index[p.leader]
        if p.load is not None:
            _parse_load(p.load, loads[i], topic, num)
        topic_names[i] = topic
        numbers[i] = num
        rep_lists[i] = row
    return topic_names, numbers, rep_lists, leaders, loads, maxrf


def _parse_partitions(parts: list, index: dict[int, int]) -> _Parsed:
    """Each partition in the order listed: topic names, partition numbers, replica
    lists as broker indices, leader indices (-1 offline), loads (P, 4), the largest
    replica count."""
    topic_names, numbers, rep_lists, leaders, loads = _columns(len(parts))
    maxrf = 1
    for i, p in enumerate(parts):
        # type() checks first: isinstance against the Mapping ABC is slow in this loop
        if type(p) is not dict and not isinstance(p, Mapping):
            raise SnapshotError(f"partitions[{i}] must be an object")
        topic = p.get("topic")
        if not isinstance(topic, str) or not topic:
            raise SnapshotError(f"partitions[{i}]: 'topic' must be a non-empty string")
        num = p.get("partition")
        if type(num) is not int or not 0 <= num <= INT32_MAX:
            raise SnapshotError(
                f"partitions[{i}] ({topic}): 'partition' must be an integer from 0 to "
                f"{INT32_MAX}, got {num!r}"
            )
        # the partition's name is built only for error messages (hot loop)
        reps = p.get("replicas")
        if not isinstance(reps, list) or not reps:
            raise SnapshotError(f"partition {topic}-{num}: 'replicas' must be a non-empty list")
        row = []
        for r in reps:
            j = index.get(r) if type(r) is int else None
            if j is None:
                if not _is_int(r):
                    raise SnapshotError(
                        f"partition {topic}-{num}: replica {r!r} is not a broker id"
                    )
                raise SnapshotError(f"partition {topic}-{num}: replica {r} is not a known broker")
            row.append(j)
        if len(set(row)) != len(row):
            raise SnapshotError(f"partition {topic}-{num}: replicas {reps} are not distinct")
        if len(row) > maxrf:
            maxrf = len(row)
        leader = p.get("leader")
        if leader is not None and leader != -1:
            if type(leader) is not int:
                raise SnapshotError(
                    f"partition {topic}-{num}: 'leader' must be a broker id, -1 or null"
                )
            if leader not in reps:
                raise SnapshotError(
                    f"partition {topic}-{num}: leader {leader} is not one of its replicas {reps}"
                )
            leaders[i] = index[leader]
        load = p.get("load")
        if load is not None:
            _parse_load(load, loads[i], topic, num)
        topic_names[i] = topic
        numbers[i] = num
        rep_lists[i] = row
    return topic_names, numbers, rep_lists, leaders, loads, maxrf


def _parse_load(load: Any, row_load: np.ndarray, topic: str, num: int) -> None:
    """Write a partition's `load` object into its row of the load array."""
    if type(load) is not dict and not isinstance(load, Mapping):
        raise SnapshotError(f"partition {topic}-{num}: 'load' must be an object")
    for j, key in enumerate(LOAD_KEYS):
        v = load.get(key)
        if v is None:
            continue
        # fast path for the common case; _number explains anything else
        if type(v) is float and 0.0 <= v < math.inf or type(v) is int and 0 <= v < 2**63:
            row_load[j] = v
        else:
            row_load[j] = _number(v, f"partition {topic}-{num}: load.{key}")


def _sort_partitions(
    topic_names: list[str], numbers: np.ndarray
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Sorted topic names, then each partition's topic index and number in
    (topic, partition) order, with that order; a partition listed twice is an error."""
    n = len(topic_names)
    topics = sorted(set(topic_names))
    code = {t: k for k, t in enumerate(topics)}
    topic_arr = np.fromiter((code[t] for t in topic_names), dtype=np.int32, count=n)
    order = np.lexsort((numbers, topic_arr)) if n else np.zeros(0, dtype=np.int64)
    topic_arr = topic_arr[order]
    numbers = numbers[order]
    if n > 1:
        dup = (topic_arr[1:] == topic_arr[:-1]) & (numbers[1:] == numbers[:-1])
        if dup.any():
            k = int(np.argmax(dup))
            raise SnapshotError(
                f"partition {topics[topic_arr[k]]}-{int(numbers[k])} is listed twice"
            )
    return topics, topic_arr, numbers, order


def _replica_matrix(
    rep_lists: list[list[int]], maxrf: int, order: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The replica lists as one (P, K) array in `order`, short rows padded with -1,
    with each partition's replica count."""
    n = len(rep_lists)
    # one array from the lists, then reordered: a numpy write per row is slow
    rf = np.fromiter(map(len, rep_lists), dtype=np.int32, count=n)
    if n and int(rf.min()) < maxrf:  # ragged: pad the short rows with -1
        rep_lists = [row + [-1] * (maxrf - len(row)) for row in rep_lists]
    replicas = np.array(rep_lists, dtype=np.int32).reshape(n, maxrf)[order]
    return replicas, rf[order]
