"""A snapshot's partitions read field by field, as numpy columns.

This is the common case only: every partition a dict (decoded JSON) or every one a
`SnapshotPartition`, whose fields have the plain types of the contract (str, int,
list, dict, float) and valid values. Anything else gives None, and the per-partition
parsers in snapshot.py read the list again and name the first problem; so this path
accepts nothing those parsers refuse, and its columns equal the ones they build,
value for value.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from operator import attrgetter, itemgetter

import numpy as np

from apps.core.bounds import INT32_MAX

from .snapshot_input import LOAD_KEYS, SnapshotPartition


@dataclass
class PartitionColumns:
    """Each partition in the order listed."""

    topic_names: list[str]
    numbers: np.ndarray  # (P,) int64
    replicas: np.ndarray  # (P, K) int32 broker index, -1 padding
    rf: np.ndarray  # (P,) int32
    leaders: np.ndarray  # (P,) int32 broker index, -1 offline
    loads: np.ndarray  # (P, 4) float64, LOAD_KEYS
    replica_dir: np.ndarray | None  # (P, K) int32 dir index, -1; None: no partition lists dirs


def _field(parts: list[dict], key: str) -> list:
    return [p.get(key) for p in parts]


def _attribute(parts: list[SnapshotPartition], key: str) -> list:
    return list(map(attrgetter(key), parts))


def _types(values: list) -> set[type]:
    return set(map(type, values))


def partition_columns(
    parts: list, broker_ids: np.ndarray, dir_index: list[dict[str, int] | None], *, typed: bool
) -> PartitionColumns | None:
    """The columns of `parts` (all `SnapshotPartition` if `typed`, else all decoded
    JSON objects) given the sorted `broker_ids` and each broker's dir index (path ->
    position), or None when any partition is not of the common case."""
    n = len(parts)
    if n == 0 or _types(parts) != ({SnapshotPartition} if typed else {dict}):
        return None
    field = _attribute if typed else _field
    topic_names = field(parts, "topic")
    if _types(topic_names) != {str} or not all(topic_names):
        return None
    numbers = _int_column(field(parts, "partition"))
    if numbers is None or numbers.min() < 0 or numbers.max() > INT32_MAX:
        return None
    matrix = _replica_matrix(field(parts, "replicas"), broker_ids)
    if matrix is None:
        return None
    replicas, rf = matrix
    # null stands for -1 in JSON only: a typed leader is an int
    leaders = _leaders(field(parts, "leader"), replicas, broker_ids, null=not typed)
    if leaders is None:
        return None
    loads = _loads(field(parts, "load"))
    if loads is None:
        return None
    on_dirs = field(parts, "log_dirs")
    replica_dir = None
    if _types(on_dirs) != {type(None)}:
        replica_dir = _replica_dirs(on_dirs, replicas, rf, dir_index)
        if replica_dir is None:
            return None
    return PartitionColumns(topic_names, numbers, replicas, rf, leaders, loads, replica_dir)


def _int_column(values: list) -> np.ndarray | None:
    """int64 of a list of ints (bool is no int here), None otherwise or past int64."""
    if _types(values) != {int}:
        return None
    return _ints(values)


def _ints(values: list[int]) -> np.ndarray | None:
    """int64 of a list of ints, None past int64."""
    try:
        return np.fromiter(values, dtype=np.int64, count=len(values))
    except OverflowError:
        return None


def _replica_matrix(lists: list, broker_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(P, K) broker indices padded with -1 and the replica counts; None unless every
    list is non-empty, of known brokers, and distinct."""
    if _types(lists) != {list}:
        return None
    n = len(lists)
    rf = np.fromiter(map(len, lists), dtype=np.int32, count=n)
    if int(rf.min()) < 1:
        return None
    ids = _int_column(list(chain.from_iterable(lists)))
    if ids is None:
        return None
    flat = _broker_index(broker_ids, ids)
    if flat is None:
        return None
    width = int(rf.max())
    if int(rf.min()) == width:
        replicas = flat.reshape(n, width)
    else:
        replicas = np.full((n, width), -1, dtype=np.int32)
        replicas[_cells(rf)] = flat
    srt = np.sort(replicas, axis=1)
    if ((srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] >= 0)).any():
        return None
    return replicas, rf


def _broker_index(broker_ids: np.ndarray, ids: np.ndarray) -> np.ndarray | None:
    """int32 index in the sorted `broker_ids` of each of `ids`, None if one is not there."""
    top = int(broker_ids[-1])
    if top < 1 << 20:  # ids this small: one table, a look-up per replica
        if int(ids.min()) < 0 or int(ids.max()) > top:
            return None
        table = np.full(top + 1, -1, dtype=np.int32)
        table[broker_ids] = np.arange(broker_ids.shape[0], dtype=np.int32)
        at = table[ids]
        return None if (at < 0).any() else at
    at = np.minimum(np.searchsorted(broker_ids, ids), broker_ids.shape[0] - 1)
    return at.astype(np.int32) if (broker_ids[at] == ids).all() else None


def _cells(rf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of each real cell of a padded matrix, row-major."""
    rows = np.repeat(np.arange(rf.shape[0]), rf)
    starts = np.cumsum(rf) - rf
    return rows, np.arange(rows.shape[0]) - np.repeat(starts, rf)


def _leaders(
    values: list, replicas: np.ndarray, broker_ids: np.ndarray, *, null: bool
) -> np.ndarray | None:
    """Each leader's broker index (-1 for -1, or null where `null` allows it), None
    unless each other leader is an int that is one of its partition's replicas."""
    kinds = _types(values)
    if not kinds <= ({int, type(None)} if null else {int}):
        return None
    if type(None) in kinds:
        values = [-1 if v is None else v for v in values]
    leader = _ints(values)  # ints only, by the test above
    if leader is None:
        return None
    ids = np.where(replicas >= 0, broker_ids[np.maximum(replicas, 0)], -1)
    hit = ids == leader[:, None]
    found = hit.any(axis=1)
    offline = leader == -1
    if not (found | offline).all():
        return None
    at = replicas[np.arange(replicas.shape[0]), hit.argmax(axis=1)]
    return np.where(offline, -1, at).astype(np.int32)


_LOAD_FIGURES = itemgetter(*LOAD_KEYS)


def _loads(values: list) -> np.ndarray | None:
    """(P, 4) of LOAD_KEYS (0 where a load or a figure is null or left out), None
    unless every figure is a finite int or float >= 0."""
    kinds = _types(values)
    if not kinds <= {dict, type(None)}:
        return None
    loads = np.zeros((len(values), len(LOAD_KEYS)), dtype=np.float64)
    rows: slice | np.ndarray = slice(None)
    if type(None) in kinds:
        rows = np.flatnonzero(np.fromiter((v is not None for v in values), dtype=bool))
        values = [v for v in values if v is not None]
    try:
        every = _figures(list(chain.from_iterable(map(_LOAD_FIGURES, values))))
    except KeyError:  # a figure left out somewhere: key by key
        for j, key in enumerate(LOAD_KEYS):
            x = _figures(_field(values, key))
            if x is None:
                return None
            loads[rows, j] = x
        return loads
    if every is None:
        return None
    loads[rows] = every.reshape(len(values), len(LOAD_KEYS))
    return loads


def _figures(values: list) -> np.ndarray | None:
    """float64 of load figures (null: 0), None unless each is a finite int or float >= 0."""
    kinds = _types(values)
    if not kinds <= {float, int, type(None)}:
        return None
    if type(None) in kinds:
        values = [0.0 if v is None else v for v in values]
    try:
        x = np.fromiter(values, dtype=np.float64, count=len(values))
    except OverflowError:
        return None
    return x if np.isfinite(x).all() and (x >= 0).all() else None


def _replica_dirs(
    values: list,
    replicas: np.ndarray,
    rf: np.ndarray,
    dir_index: list[dict[str, int] | None],
) -> np.ndarray | None:
    """(P, K) index of each replica's dir in its broker's list (-1: null, or the
    partition lists none), None unless each listed row is a list aligned with the
    replicas of paths (or nulls) its brokers list."""
    kinds = _types(values)
    if not kinds <= {list, type(None)}:
        return None
    listed: slice | np.ndarray = slice(None)  # the partitions that list their dirs
    if type(None) in kinds:
        listed = np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
        values = [v for v in values if v is not None]
    # a cluster has few distinct rows of paths: each is read once
    distinct: dict[tuple, int] = {}
    try:
        found = [distinct.setdefault(tuple(v), len(distinct)) for v in values]
    except TypeError:  # a row holding something unhashable: no path
        return None
    row = np.array(found, dtype=np.int64)
    known = sorted({path for d in dir_index if d for path in d})
    code: dict[str | None, int] = {path: g for g, path in enumerate(known)}
    code[None] = -1  # a null dir: unknown
    width = replicas.shape[1]
    # each distinct row as path codes: -1 a null (or past the row's end), len(known) a
    # path no broker lists
    rows = np.full((len(distinct), width), -1, dtype=np.int64)
    lengths = np.zeros(len(distinct), dtype=np.int64)
    for paths, r in distinct.items():
        if len(paths) > width or not _types(list(paths)) <= {str, type(None)}:
            return None
        lengths[r] = len(paths)
        rows[r, : len(paths)] = [code.get(path, len(known)) for path in paths]
    if not (lengths[row] == rf[listed]).all():
        return None
    # lut[broker, path code]: the path's place in that broker's list, -2 not listed
    lut = np.full((len(dir_index), len(known) + 1), -2, dtype=np.int32)
    for b, d in enumerate(dir_index):
        for path, k in (d or {}).items():
            lut[b, code[path]] = k
    codes = rows[row]
    k = np.where(codes == -1, -1, lut[replicas[listed], np.maximum(codes, 0)])
    if (k == -2).any():
        return None
    out = np.full(replicas.shape, -1, dtype=np.int32)
    out[listed] = k
    return out
