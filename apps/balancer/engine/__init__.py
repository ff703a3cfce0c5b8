"""Kafka Balancer engine: a pure Python (numpy) planner, no Django.

    from apps.balancer.engine import propose, PlannerOptions
    proposal = propose(snapshot_dict, mode="full", options=PlannerOptions())
    proposal.plan    # {"version": 1, "partitions": [...]}, for kafka-reassign-partitions.sh
    proposal.report  # figures before/after, movement, goals, time taken

The contract (snapshot, plan, load model, figures) is docs/BALANCING.md.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from apps.core.garbage_collection import garbage_collection_paused

from .disks import disk_capacity_applied
from .errors import BalancerError, PlanError, SnapshotError
from .goals import ALL_GOALS, HARD_GOALS, SOFT_GOALS, build_goals, build_leadership_pass
from .loads import balance_ratio, broker_loads
from .model import ClusterModel
from .modes import MODES, default_soft_goals, disk_parse, setup_mode
from .optimizer import run
from .options import PlannerOptions
from .plan import build_plan, validate_plan
from .report import build_report
from .snapshot import Snapshot, parse_snapshot
from .snapshot_input import (
    ClusterSnapshot,
    SnapshotBroker,
    SnapshotPartition,
    SnapshotWindow,
)


@dataclass
class Proposal:
    plan: dict
    report: dict


@garbage_collection_paused()  # few objects in cycles; full collections walk the snapshot
def propose(
    snapshot: Mapping[str, Any] | ClusterSnapshot | Snapshot,
    mode: str = "full",
    brokers: Iterable[int] = (),
    options: PlannerOptions | None = None,
    *,
    disks: Iterable[tuple[int, str]] = (),
    include_moves: bool = True,
) -> Proposal:
    """Plan a rebalance of `snapshot` (BALANCING.md §1). Deterministic: the same
    snapshot and options always give the same plan.

    Raises SnapshotError for a malformed snapshot and PlanError for an impossible
    request; never returns a partial plan. `disks` names the (broker id, log dir)
    pairs the `remove-disks` mode empties."""
    t0 = time.perf_counter()
    options = options or PlannerOptions()
    options.validate()
    snap = parse_snapshot(snapshot)
    t_parse = time.perf_counter()
    setup = setup_mode(snap, mode, brokers, demoted=options.demoted, disks=disks)
    snap = disk_capacity_applied(snap, setup.removed_dirs)
    soft = options.goals if options.goals is not None else default_soft_goals(mode)
    goals = build_goals(
        soft, options, demoted=setup.demoted is not None, disks=snap.log_dirs is not None
    )
    model = ClusterModel(
        snap,
        setup,
        capacity_threshold=options.capacity_threshold,
        max_replicas_per_broker=options.max_replicas_per_broker,
    )
    stats = run(model, goals, build_leadership_pass(options))
    model.release_search_state()
    t_opt = time.perf_counter()
    plan = build_plan(snap, model.assign, setup.usable, model.disks)
    seconds = {"parse": t_parse - t0, "optimize": t_opt - t_parse}
    report = build_report(model, stats, options, seconds, include_moves=include_moves, plan=plan)
    seconds["total"] = time.perf_counter() - t0
    report["seconds"] = {k: round(v, 4) for k, v in seconds.items()}
    return Proposal(plan=plan, report=report)


@garbage_collection_paused()
def judge(
    snapshot: Mapping[str, Any] | ClusterSnapshot | Snapshot,
    mode: str = "full",
    brokers: Iterable[int] = (),
    options: PlannerOptions | None = None,
    *,
    disks: Iterable[tuple[int, str]] = (),
) -> list[dict]:
    """Each goal's judgement (BALANCING.md §8) of `snapshot` as it is, nothing moved:
    the goals `propose` would run for the same mode and options, in the same order,
    each as ``{"name", "hard", "threshold", "violated", "violation", ...}``. What a
    plan would leave is judged by applying it to the snapshot first.

    Raises SnapshotError and PlanError as `propose` does."""
    options = options or PlannerOptions()
    options.validate()
    snap = parse_snapshot(snapshot)
    setup = setup_mode(snap, mode, brokers, demoted=options.demoted, disks=disks)
    snap = disk_capacity_applied(snap, setup.removed_dirs)
    soft = options.goals if options.goals is not None else default_soft_goals(mode)
    goals = build_goals(
        soft, options, demoted=setup.demoted is not None, disks=snap.log_dirs is not None
    )
    named = {g.name for g in goals}
    goals += [g for g in build_leadership_pass(options) if g.name not in named]
    model = ClusterModel(
        snap,
        setup,
        capacity_threshold=options.capacity_threshold,
        max_replicas_per_broker=options.max_replicas_per_broker,
    )
    model.disks_follow()
    return [{**g.describe(), **g.judge(model)} for g in goals]


__all__ = [
    "ALL_GOALS",
    "HARD_GOALS",
    "MODES",
    "SOFT_GOALS",
    "BalancerError",
    "ClusterSnapshot",
    "PlanError",
    "PlannerOptions",
    "Proposal",
    "Snapshot",
    "SnapshotBroker",
    "SnapshotError",
    "SnapshotPartition",
    "SnapshotWindow",
    "balance_ratio",
    "broker_loads",
    "disk_parse",
    "judge",
    "parse_snapshot",
    "propose",
    "validate_plan",
]
