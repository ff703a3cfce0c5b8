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
from apps.core.garbage_collection import garbage_collection_paused

from .errors import SnapshotError
from .snapshot_columns import PartitionColumns, partition_columns
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
    # Disks (JBOD, BALANCING.md §1), kept for the goals that will read them; no planning
    # uses them yet. None where the snapshot lists none.
    log_dirs: list[list[str]] | None = None  # (B,) each broker's dir paths, as listed
    log_dir_total: np.ndarray | None = None  # (B, D) float64 bytes, NaN unknown or padding
    log_dir_usable: np.ndarray | None = None  # (B, D) float64 bytes, NaN unknown or padding
    log_dir_online: np.ndarray | None = None  # (B, D) bool, False for padding
    # (P, K) int32: the index in its broker's log_dirs of each replica's dir, -1 where
    # unknown or padding; None when no partition lists its dirs.
    replica_dir: np.ndarray | None = None

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


def _parse_brokers(
    raw: Any,
) -> tuple[list[int], list[str | None], list[bool], list[list[float]], list[list[_LogDir] | None]]:
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
        rows.append((bid, rack, alive, caps, _parse_log_dirs(b.get("log_dirs"), bid)))
    rows.sort(key=lambda r: r[0])
    return (
        [r[0] for r in rows],
        [r[1] for r in rows],
        [r[2] for r in rows],
        [r[3] for r in rows],
        [r[4] for r in rows],
    )


# One disk of a broker: path, total bytes, usable bytes (NaN unknown), online.
_LogDir = tuple[str, float, float, bool]


def _parse_log_dirs(raw: Any, bid: int) -> list[_LogDir] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise SnapshotError(f"broker {bid}: 'log_dirs' must be a list")
    dirs: list[_LogDir] = []
    for k, d in enumerate(raw):
        where = f"broker {bid}: log_dirs[{k}]"
        if not isinstance(d, Mapping):
            raise SnapshotError(f"{where} must be an object")
        path = d.get("path")
        if not isinstance(path, str) or not path:
            raise SnapshotError(f"{where}: 'path' must be a non-empty string, got {path!r}")
        if any(path == other[0] for other in dirs):
            raise SnapshotError(f"broker {bid}: log dir {path!r} is listed twice")
        total, usable = (
            math.nan if d.get(key) is None else _number(d[key], f"{where}: {key}")
            for key in ("total", "usable")
        )
        if usable > total:  # False when either is NaN (unknown)
            raise SnapshotError(f"{where}: usable {d['usable']} is more than total {d['total']}")
        online = d.get("online", True)
        if not isinstance(online, bool):
            raise SnapshotError(f"{where}: 'online' must be true or false, got {online!r}")
        dirs.append((path, total, usable, online))
    return dirs


def _dir_row(
    raw: Any, reps: list, row: list[int], dir_index: list[dict[str, int] | None], name: str
) -> list[int]:
    """A partition's `log_dirs` as the index of each replica's dir in its broker's list
    (-1: null, unknown)."""
    if not isinstance(raw, list) or len(raw) != len(row):
        raise SnapshotError(
            f"partition {name}: 'log_dirs' must be a list aligned with replicas {reps}"
        )
    out = []
    for path, broker in zip(raw, row, strict=True):
        if path is None:
            out.append(-1)
            continue
        known = dir_index[broker]
        k = known.get(path) if known is not None and isinstance(path, str) else None
        if k is None:
            raise SnapshotError(
                f"partition {name}: log dir {path!r} is not one that broker {reps[len(out)]} lists"
            )
        out.append(k)
    return out


def _log_dir_arrays(
    dirs: list[list[_LogDir] | None],
) -> tuple[list[list[str]], np.ndarray, np.ndarray, np.ndarray] | None:
    """Each broker's paths and (B, D) total, usable, online; None when none lists any."""
    if all(d is None for d in dirs):
        return None
    width = max((len(d) for d in dirs if d), default=0)
    total = np.full((len(dirs), width), np.nan)
    usable = np.full((len(dirs), width), np.nan)
    online = np.zeros((len(dirs), width), dtype=bool)
    for b, listed in enumerate(dirs):
        for k, (_, t, u, on) in enumerate(listed or ()):
            total[b, k], usable[b, k], online[b, k] = t, u, on
    return [[d[0] for d in listed or ()] for listed in dirs], total, usable, online


@garbage_collection_paused()  # an object per partition and replica, none in a cycle
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
    ids, racks, alive, caps, dirs = _parse_brokers(raw_brokers)
    index = {bid: i for i, bid in enumerate(ids)}
    dir_index = [None if d is None else {x[0]: k for k, x in enumerate(d)} for d in dirs]
    typed = isinstance(data, ClusterSnapshot)
    if typed:
        parts = data.partitions
    else:
        parts = data.get("partitions")
        if not isinstance(parts, list):
            raise SnapshotError("snapshot field 'partitions' must be a list")
    cols = partition_columns(parts, np.asarray(ids, dtype=np.int64), dir_index, typed=typed)
    if cols is None:  # not the common case: a loop reads it again and names any problem
        if typed:
            cols = _columns_of(*_parse_typed_partitions(parts, index, dir_index))
        else:
            cols = _columns_of(*_parse_partitions(parts, index, dir_index))
    topics, topic_arr, numbers, order = _sort_partitions(cols.topic_names, cols.numbers)
    loads = cols.loads[order]
    disks = _log_dir_arrays(dirs)
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
        replicas=cols.replicas[order],
        rf=cols.rf[order],
        leader=cols.leaders[order],
        bytes_in=np.ascontiguousarray(loads[:, 0]),
        bytes_out=np.ascontiguousarray(loads[:, 1]),
        messages_in=np.ascontiguousarray(loads[:, 2]),
        size=np.ascontiguousarray(loads[:, 3]),
        log_dirs=None if disks is None else disks[0],
        log_dir_total=None if disks is None else disks[1],
        log_dir_usable=None if disks is None else disks[2],
        log_dir_online=None if disks is None else disks[3],
        replica_dir=None if cols.replica_dir is None else cols.replica_dir[order],
    )


# topic names, numbers, replica rows, leaders, loads, largest replica count, and the
# dir rows of the partitions (as listed) that list their replicas' dirs
_Parsed = tuple[
    list[str], np.ndarray, list[list[int]], np.ndarray, np.ndarray, int, dict[int, list[int]]
]


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


def _parse_typed_partitions(
    parts: list[SnapshotPartition],
    index: dict[int, int],
    dir_index: list[dict[str, int] | None],
) -> _Parsed:
    """As `_parse_partitions`, for typed partitions: their field types are the
    producer's; what a type cannot say (known, distinct replicas; the leader one of
    them; finite loads >= 0) is checked here the same way."""
    topic_names, numbers, rep_lists, leaders, loads = _columns(len(parts))
    maxrf = 1
    dir_rows: dict[int, list[int]] = {}
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
        if p.log_dirs is not None:
            dir_rows[i] = _dir_row(p.log_dirs, reps, row, dir_index, f"{topic}-{num}")
        topic_names[i] = topic
        numbers[i] = num
        rep_lists[i] = row
    return topic_names, numbers, rep_lists, leaders, loads, maxrf, dir_rows


def _parse_partitions(
    parts: list,
    index: dict[int, int],
    dir_index: list[dict[str, int] | None],
) -> _Parsed:
    """Each partition in the order listed: topic names, partition numbers, replica
    lists as broker indices, leader indices (-1 offline), loads (P, 4), the largest
    replica count, and the dir rows of those that list `log_dirs`."""
    topic_names, numbers, rep_lists, leaders, loads = _columns(len(parts))
    maxrf = 1
    dir_rows: dict[int, list[int]] = {}
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
        on_dirs = p.get("log_dirs")
        if on_dirs is not None:
            dir_rows[i] = _dir_row(on_dirs, reps, row, dir_index, f"{topic}-{num}")
        topic_names[i] = topic
        numbers[i] = num
        rep_lists[i] = row
    return topic_names, numbers, rep_lists, leaders, loads, maxrf, dir_rows


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
    topic_arr = np.fromiter(map(code.__getitem__, topic_names), dtype=np.int32, count=n)
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


def _columns_of(
    topic_names: list[str],
    numbers: np.ndarray,
    rep_lists: list[list[int]],
    leaders: np.ndarray,
    loads: np.ndarray,
    maxrf: int,
    dir_rows: dict[int, list[int]],
) -> PartitionColumns:
    """The parsed lists as columns: replica lists (and dir rows) as one (P, K) array,
    short rows padded with -1, with each partition's replica count."""
    n = len(rep_lists)
    # one array from the lists: a numpy write per row is slow
    rf = np.fromiter(map(len, rep_lists), dtype=np.int32, count=n)
    if n and int(rf.min()) < maxrf:  # ragged: pad the short rows with -1
        rep_lists = [row + [-1] * (maxrf - len(row)) for row in rep_lists]
    replicas = np.array(rep_lists, dtype=np.int32).reshape(n, maxrf)
    replica_dir = None
    if dir_rows:
        replica_dir = np.full(replicas.shape, -1, dtype=np.int32)
        for i, row in dir_rows.items():
            replica_dir[i, : len(row)] = row
    return PartitionColumns(topic_names, numbers, replicas, rf, leaders, loads, replica_dir)
