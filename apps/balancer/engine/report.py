"""The report that goes next to the plan: figures before/after, movement, goals,
the goal behind each changed partition, data-loss decisions and time taken."""

from __future__ import annotations

import math
from itertools import repeat

import numpy as np

from apps.core.garbage_collection import garbage_collection_paused

from .disk_figures import disk_figures
from .disks import DiskModel
from .figures import lower_bounds, movement, resource_figures
from .loads import DEAD_BROKER_ZERO
from .measures import MEASURE_NAMES, broker_loads
from .model import ClusterModel
from .options import PlannerOptions
from .plan import changed_partitions, listed_partitions


@garbage_collection_paused()  # an entry per changed partition, none in a cycle
def build_report(
    model: ClusterModel,
    goal_stats: list[dict],
    options: PlannerOptions,
    seconds: dict[str, float],
    *,
    include_moves: bool = True,
    plan: dict | None = None,
) -> dict:
    """The report of `model` once optimised. With `plan` (build_plan's, of the same
    model), each move's `after` is the plan entry's own replica list, not a copy."""
    snap = model.snap
    setup = model.setup
    ids = snap.broker_ids
    # each side's per-broker loads, computed once for the figures and the bars
    loads = {
        side: broker_loads(assign, model.fvec, model.lvec, model.n_brokers)
        for side, assign in (("before", snap.replicas), ("after", model.assign))
    }
    before = resource_figures(model, loads["before"])
    after = resource_figures(model, loads["after"])
    bounds = lower_bounds(model, after)
    balance = {
        name: {
            "before": round(before[name]["ratio"], 6),
            "after": round(after[name]["ratio"], 6),
            "lower_bound": round(bounds[name], 6),
            "min_before": round(before[name]["min_ratio"], 6),
            "min_after": round(after[name]["min_ratio"], 6),
            "ideal": after[name]["ideal"],
            "capacity_based": after[name]["capacity_based"],
        }
        for name in before
    }
    name = snap.partition_name
    report: dict = {
        "cluster": snap.cluster,
        "taken_at": snap.taken_at,
        "mode": setup.mode,
        "brokers": {
            "total": snap.n_brokers,
            "usable": int(model.usable.sum()),
            "dead": [int(b) for b in ids[~snap.alive]],
            "removed": [int(ids[b]) for b in setup.removed],
            "added": [int(ids[b]) for b in setup.added],
        },
        "partitions": snap.n_partitions,
        "replicas": int(snap.rf.sum()),
        "options": {
            "balance_threshold": options.balance_threshold,
            "thresholds": dict(options.thresholds),
            "capacity_threshold": options.capacity_threshold,
            "max_replicas_per_broker": options.max_replicas_per_broker,
            "allow_data_loss": options.allow_data_loss,
        },
        "balance": balance,
        "movement": {
            **movement(snap, model.assign),
            "given_back": model.trimmed,
            "polish_moves": model.polished,
        },
        "goals": goal_stats,
        "unmet_hard_goals": unmet_hard_goals(goal_stats),
        "data_loss": {
            "allowed": options.allow_data_loss,
            "skipped": [name(p) for p in model.data_loss_skipped],
            "healed": [name(p) for p in model.data_loss_healed],
        },
        "unfixable": [
            {"partition": name(p), "reason": reason}
            for p, reason in sorted(model.unfixable.items())
        ],
        "seconds": {k: round(v, 4) for k, v in seconds.items()},
    }
    report["broker_loads"] = _broker_loads(model, loads)
    if model.disks is not None:
        start = model.disks_start
        if start is None:  # the model never saw its starting dirs: built here
            # the starting dirs live only for the figures: freed before the moves are listed
            before = DiskModel(
                snap,
                snap.replicas,
                removed=setup.removed_dirs,
                capacity_threshold=options.capacity_threshold,
                moves=setup.disk_moves,
            )
            start = (before.used, before.lead)
        report["disks"] = disk_figures(start, model.disks)
    if include_moves:
        report["moves"] = _moves(model, plan)
    return report


def _broker_loads(model: ClusterModel, loads: dict[str, np.ndarray]) -> dict:
    """Every broker's measures before and after (`loads`), for the plan page's bars:
    from the model's own arrays, so no page rebuilds the cluster for them. A dead
    broker shows no traffic, as engine.broker_loads has it."""
    snap = model.snap
    out: dict = {"brokers": [int(b) for b in snap.broker_ids]}
    for side, measured in loads.items():
        load = measured.copy()
        for name in DEAD_BROKER_ZERO:
            load[~snap.alive, MEASURE_NAMES.index(name)] = 0.0
        out[side] = {name: load[:, j].round(3).tolist() for j, name in enumerate(MEASURE_NAMES)}
    return out


def unmet_hard_goals(goal_stats: list[dict]) -> list[dict]:
    """Hard goals still violated by the final assignment, with how much before and
    after the plan (the goals' judgements) and the worst offender."""
    out = []
    for g in goal_stats:
        end = g["end"]
        if not g["hard"] or not end["violated"]:
            continue
        out.append(
            {
                "name": g["name"],
                "violation_before": g["start"]["violation"],
                "violation_after": end["violation"],
                "offenders": end["offenders_total"],
                "worst": end["offenders"][0]["text"] if end["offenders"] else None,
            }
        )
    return out


def _moves(model: ClusterModel, plan: dict | None) -> list[dict]:
    """One entry per changed partition, with the goal(s) behind the change; with
    `plan`, its replica lists are the entries' `after` (equal, and no code changes
    either)."""
    snap = model.snap
    init = snap.replicas
    final = model.assign
    changed = changed_partitions(init, final)
    ids = snap.broker_ids
    # rows gathered with take: several times faster than fancy indexing, same rows
    old = ids[np.maximum(init.take(changed, axis=0), 0)]
    new = ids[np.maximum(final.take(changed, axis=0), 0)]
    rf = snap.rf[changed]
    real = np.arange(old.shape[1])[None, :] < rf[:, None]
    # a broker of one list in none of the other's real cells
    added = real & ~((new[:, :, None] == old[:, None, :]) & real[:, None, :]).any(axis=2)
    removed = real & ~((old[:, :, None] == new[:, None, :]) & real[:, None, :]).any(axis=2)
    # bytes copied: the partition's size once per broker it arrives on
    copied = np.round(snap.size[changed] * added.sum(axis=1)).astype(np.int64)
    # one leader entry per distinct (from, to), shared by the entries that have it
    ends, which = leader_ends(old[:, 0], new[:, 0])
    leaders = [{"from": a, "to": b} if a != b else None for a, b in ends]
    topics = snap.topics
    reasons = model.reasons
    # one list per distinct set of goals, shared by the entries that name it: no code
    # changes a report's lists, and there are far fewer sets than entries
    shared: dict[tuple[str, ...], list[str]] = {(): []}
    known = shared.get  # a look-up first: a new list per entry costs more
    # the brokers added and removed: most often one, so few distinct lists too
    n = changed.shape[0]
    moved = kept_lists(np.concatenate((new, old)), np.concatenate((added, removed)))
    return [
        {
            "topic": topics[t],
            "partition": number,
            "before": before,
            "after": after,
            "added": add,
            "removed": gone,
            "leader": leaders[w],
            "bytes_moved": size,
            "goals": known(goals) or shared.setdefault(goals, list(goals)),
        }
        for goals, t, number, before, after, add, gone, w, size in zip(
            map(tuple, map(reasons.get, changed.tolist(), repeat(()))),
            snap.topic[changed].tolist(),
            snap.partition[changed].tolist(),
            _rows(old, real),
            _after(model, changed, plan) if plan is not None else _rows(new, real),
            moved[:n],
            moved[n:],
            which.ravel().tolist(),
            copied.tolist(),
            strict=True,
        )
    ]


def leader_ends(old: np.ndarray, new: np.ndarray) -> tuple[list[list[int]], np.ndarray]:
    """The distinct pairs (old[i], new[i]) of two int columns, ascending, and the
    index of each row's pair among them: `np.unique` of the stacked pairs with
    axis=0 and return_inverse, by one int key per pair (a sort of one column
    costs less than that of rows)."""
    if old.shape[0] == 0:
        return [], np.zeros(0, dtype=np.int64)
    low = int(min(old.min(), new.min()))
    span = int(max(old.max(), new.max())) - low + 1
    if span > 1 << 31:  # the key would overflow int64
        ends, which = np.unique(np.stack([old, new], axis=1), axis=0, return_inverse=True)
        return ends.tolist(), which.ravel()
    key = (old.astype(np.int64) - low) * span + (new.astype(np.int64) - low)
    keys, which = np.unique(key, return_inverse=True)
    return np.stack([keys // span + low, keys % span + low], axis=1).tolist(), which


def _after(model: ClusterModel, changed: np.ndarray, plan: dict) -> list[list[int]]:
    """The replica lists of the `changed` partitions (changed_partitions) in `plan`."""
    moved_dir = None if model.disks is None else model.disks.changed()
    listed = listed_partitions(changed, moved_dir)
    entries = plan["partitions"]
    return [entries[i]["replicas"] for i in np.searchsorted(listed, changed).tolist()]


def _rows(values: np.ndarray, keep: np.ndarray) -> list[list[int]]:
    """Each row's kept values, in order."""
    if keep.all():
        return values.tolist()
    flat = values[keep].tolist()
    ends = np.cumsum(keep.sum(axis=1)).tolist()
    return [flat[a:b] for a, b in zip([0, *ends][:-1], ends, strict=True)]


def kept_lists(values: np.ndarray, keep: np.ndarray) -> list[list[int]]:
    """`_rows(values, keep)` of an int matrix, rows of equal content as one shared
    list: each row keyed by one int (its kept values as digits, in order), the few
    distinct keys listed once each (a sort of one column costs less than a dict
    look-up per row)."""
    if values.shape[0] == 0:
        return []
    low = int(values.min())
    base = int(values.max()) - low + 2  # digits 1..base-1: a kept value, never 0
    if values.shape[1] * math.log2(base) >= 62:  # the key would overflow int64
        lists: dict[tuple[int, ...], list[int]] = {}
        return [lists.setdefault(tuple(r), r) for r in _rows(values, keep)]
    digits = values.astype(np.int64) - (low - 1)
    key = np.zeros(values.shape[0], dtype=np.int64)
    for k in range(values.shape[1]):
        key = np.where(keep[:, k], key * base + digits[:, k], key)
    keys, which = np.unique(key, return_inverse=True)
    which = which.ravel()
    # a row of each key: any will do, they hold the same values
    row = np.empty(keys.shape[0], dtype=np.int64)
    row[which] = np.arange(which.shape[0])
    distinct = _rows(values[row], keep[row])
    return list(map(distinct.__getitem__, which.tolist()))
