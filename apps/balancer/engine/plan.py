"""The plan: the net difference between the starting and the final assignment,
as exactly the JSON kafka-reassign-partitions.sh accepts (BALANCING.md §2)."""

from __future__ import annotations

import numpy as np

from apps.core.garbage_collection import garbage_collection_paused

from .disks import DiskModel
from .errors import PlanError
from .snapshot import Snapshot


def changed_partitions(initial: np.ndarray, final: np.ndarray) -> np.ndarray:
    """Partitions whose replica list (order included) differs."""
    return np.flatnonzero(_any_column(initial != final))


def listed_partitions(changed: np.ndarray, moved_dir: np.ndarray | None = None) -> np.ndarray:
    """The partitions a plan lists, in its order: the `changed` ones (changed_partitions)
    and those with a replica moved to another dir (`moved_dir`)."""
    if moved_dir is not None:
        # a mask over the partitions: np.union1d's sort costs more, for the same
        # sorted distinct indices
        listed = _any_column(moved_dir)
        listed[changed] = True
        changed = np.flatnonzero(listed)
    return changed


def _any_column(cells: np.ndarray) -> np.ndarray:
    """(P,) whether any of a row's few columns is set: column by column, as numpy's
    any(axis=1) over a short axis is slow."""
    out = cells[:, 0].copy()
    for j in range(1, cells.shape[1]):
        out |= cells[:, j]
    return out


@garbage_collection_paused()  # an entry per changed partition, none in a cycle
def build_plan(
    snap: Snapshot, final: np.ndarray, usable: np.ndarray, disks: DiskModel | None = None
) -> dict:
    """The plan of `final`; with `disks`, an entry names the dir of each replica that
    goes to a dir it is not in on a broker of several dirs ("any" for the others), and
    a partition whose replicas only change dirs is listed too."""
    moved_dir = None if disks is None else disks.changed()
    changed = listed_partitions(changed_partitions(snap.replicas, final), moved_dir)
    rows = final.take(changed, axis=0)  # take: faster than fancy indexing, same rows
    rf = snap.rf[changed]
    real = np.arange(rows.shape[1])[None, :] < rf[:, None]
    # the plan must be valid by construction (BALANCING.md §2): fail loudly rather than
    # emit a bad one
    bad = (real & ((rows < 0) | ~snap.alive[np.maximum(rows, 0)])).any(axis=1)
    srt = np.sort(np.where(real, rows, -1 - np.arange(rows.shape[1])[None, :]), axis=1)
    bad |= (srt[:, 1:] == srt[:, :-1]).any(axis=1)
    if bad.any():
        p = int(changed[np.argmax(bad)])
        raise PlanError(
            f"internal error: invalid replica list {final[p].tolist()} for {snap.partition_name(p)}"
        )
    ids = np.where(real, snap.broker_ids[np.maximum(rows, 0)], 0).tolist()
    if not real.all():  # a row past its replicas: cut to them
        ids = [r[:k] for r, k in zip(ids, rf.tolist(), strict=True)]
    topics = snap.topics
    parts = [
        {"topic": topics[t], "partition": n, "replicas": r}
        for t, n, r in zip(
            snap.topic[changed].tolist(), snap.partition[changed].tolist(), ids, strict=True
        )
    ]
    if moved_dir is not None:
        _dirs_named(parts, changed, rf, moved_dir, disks)
    return {"version": 1, "partitions": parts}


def _dirs_named(
    parts: list[dict], changed: np.ndarray, rf: np.ndarray, moved: np.ndarray, disks: DiskModel
) -> None:
    """Name the dirs of `moved` replicas on brokers with a choice of dirs (a broker
    with one dir has nowhere else to put a replica: no request is needed); `rf`, the
    length of each entry's replica list."""
    paths = disks.snap.log_dirs or []
    if not paths:
        return
    n_dirs = np.array([len(listed) for listed in paths], dtype=np.int64)
    brokers = np.maximum(disks.assign.take(changed, axis=0), 0)
    width = brokers.shape[1]
    real = np.arange(width)[None, :] < rf[:, None]
    named = moved.take(changed, axis=0) & real & (n_dirs[brokers] > 1)
    rows = np.flatnonzero(named.any(axis=1))
    if rows.shape[0] == 0:
        return
    # every broker's paths in one table, with "any" in a last column of its own
    table = np.full((len(paths), int(n_dirs.max()) + 1), "any", dtype=object)
    for b, listed in enumerate(paths):
        table[b, : len(listed)] = listed
    b = brokers[rows]
    d = disks.dir[changed[rows]].astype(np.int64)
    d = np.where(d < 0, d + n_dirs[b], d)  # a negative index counts from the end, as in a list
    chosen = table[b, np.where(named[rows], d, table.shape[1] - 1)].tolist()
    entries = map(parts.__getitem__, rows.tolist())
    if real.all():  # no row past its replicas: the rows as they are
        for entry, dirs in zip(entries, chosen, strict=True):
            entry["log_dirs"] = dirs
        return
    for entry, dirs, k in zip(entries, chosen, rf[rows].tolist(), strict=True):
        entry["log_dirs"] = dirs[:k]


def validate_plan(plan: dict, snapshot: dict) -> list[str]:
    """Check a plan against a raw snapshot by the rules of BALANCING.md §2.

    Returns the problems found (empty when valid). Used by tests and callers that
    receive a plan from elsewhere."""
    problems: list[str] = []
    if set(plan) != {"version", "partitions"} or plan.get("version") != 1:
        return ["plan must be exactly {'version': 1, 'partitions': [...]}"]
    alive = {b["id"]: b.get("alive", True) for b in snapshot["brokers"]}
    dirs = {
        b["id"]: {d["path"]: d.get("online", True) for d in b["log_dirs"]}
        for b in snapshot["brokers"]
        if b.get("log_dirs") is not None
    }
    current = {(p["topic"], p["partition"]): p["replicas"] for p in snapshot["partitions"]}
    current_dirs = {(p["topic"], p["partition"]): p.get("log_dirs") for p in snapshot["partitions"]}
    seen = set()
    for entry in plan["partitions"]:
        if set(entry) not in ({"topic", "partition", "replicas"}, _KEYS_WITH_DIRS):
            problems.append(
                f"entry {entry} must have exactly topic, partition, replicas (and log_dirs)"
            )
            continue
        key = (entry["topic"], entry["partition"])
        name = f"{key[0]}-{key[1]}"
        if key in seen:
            problems.append(f"{name} listed twice")
        seen.add(key)
        if key not in current:
            problems.append(f"{name} is not in the snapshot")
            continue
        reps = entry["replicas"]
        if len(reps) != len(current[key]):
            problems.append(f"{name}: replica count changes")
        if len(set(reps)) != len(reps):
            problems.append(f"{name}: replicas are not distinct")
        for r in reps:
            if r not in alive:
                problems.append(f"{name}: broker {r} does not exist")
            elif not alive[r]:
                problems.append(f"{name}: broker {r} is not alive")
        moved_dir = False
        if "log_dirs" in entry:
            found, moved_dir = _dir_problems(
                name, reps, entry["log_dirs"], current[key], current_dirs[key], dirs
            )
            problems += found
            moved_dir = moved_dir or bool(found)  # a bad dir is reported once, as bad
        if list(reps) == list(current[key]) and not moved_dir:
            problems.append(f"{name}: listed but unchanged")
    return problems


_KEYS_WITH_DIRS = {"topic", "partition", "replicas", "log_dirs"}


def _dir_problems(
    name: str,
    reps: list,
    chosen: object,
    before: list,
    before_dirs: list | None,
    dirs: dict[int, dict[str, bool]],
) -> tuple[list[str], bool]:
    """The problems of an entry's `log_dirs` (aligned with replicas, "any" where no dir
    is chosen; each named dir one its broker lists and online), and whether it moves a
    replica that stays on its broker to another dir."""
    if not isinstance(chosen, list) or len(chosen) != len(reps):
        return [f"{name}: log_dirs must be a list aligned with replicas"], False
    if all(d == "any" for d in chosen):
        return [f"{name}: log_dirs names no dir (leave it out)"], False
    was = dict(zip(before, before_dirs or [None] * len(before), strict=True))
    problems: list[str] = []
    moved = False
    for broker, path in zip(reps, chosen, strict=True):
        if path == "any":
            continue
        known = dirs.get(broker) if isinstance(path, str) else None
        if known is None or path not in known:
            problems.append(f"{name}: log dir {path!r} is not one that broker {broker} lists")
        elif not known[path]:
            problems.append(f"{name}: log dir {path!r} of broker {broker} is offline")
        elif broker in was and was[broker] != path:
            moved = True
    return problems, moved
