"""Drive the goals in priority order.

Hard goals become constraints before anything moves, so no move of any goal can
make a hard goal worse. Each soft goal becomes a constraint once optimised, so a
later goal can't break an earlier one (Cruise Control's rule).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from .goals import Goal
from .model import ClusterModel
from .polish import GOAL_OF, polish
from .trim import trim


def run(model: ClusterModel, goals: Sequence[Goal], leadership: Sequence[Goal] = ()) -> list[dict]:
    """Optimise `model` in place; return per-goal statistics in priority order.

    `leadership` goals run last, by reordering replica lists only, with leadership
    open to every usable broker whatever the mode: every mode ends with leaders
    balanced wherever a reorder alone can get there, and no data is copied for it.
    The goals on each broker's dirs (`disk_level`) run after everything else, on the
    final assignment: where each replica ends up on its broker.

    Each goal's judgement (BALANCING.md §8) is taken on the cluster as it is, before
    anything moves (`start`), and on the final assignment (`end`)."""
    disk_goals = [g for g in goals if g.disk_level]
    goals = [g for g in goals if not g.disk_level]
    named = {g.name for g in goals}
    extra = [g for g in leadership if g.name not in named]
    if disk_goals:
        model.disks_follow()
    start = [g.judge(model) for g in [*goals, *extra, *disk_goals]]
    for g in goals:
        if g.hard:
            g.register(model)
    stats = [_optimise(model, g) for g in goals]
    if leadership:
        model.open_leadership()
    _leadership_pass(model, leadership, stats)
    _trim_and_polish(model, goals, stats)
    for g in goals:
        g.finish(model)
    if disk_goals:
        model.disks_follow()
        stats += [_optimise(model, g) for g in disk_goals]
    # measured again at the end: a goal satisfied in its turn must still be satisfied
    for g, st, first in zip([*goals, *extra, *disk_goals], stats, start, strict=True):
        end = g.judge(model)
        st["violation_final"] = end["violation"]
        st["satisfied_final"] = not end["violated"]
        st["start"] = first
        st["end"] = end
    return stats


def _optimise(model: ClusterModel, g: Goal) -> dict:
    """Optimise one goal in its turn; a soft goal then becomes a constraint."""
    t0 = time.perf_counter()
    before = g.violation(model)
    disk_moves_before = 0 if model.disks is None else model.disks.moves_made
    g.prepare(model)
    g.optimize(model)
    if not g.hard:
        g.register(model)
    after = g.violation(model)
    c = model.counter(g.name)
    disk_moves = 0 if model.disks is None else model.disks.moves_made
    return {
        **g.describe(),
        "violation_before": before,
        "violation_after": after,
        "satisfied": after == 0,
        "replica_moves": c.replica_moves,
        "leadership_moves": c.leader_moves,
        "swaps": c.swaps,
        **({"disk_moves": disk_moves - disk_moves_before} if g.disk_level else {}),
        "seconds": round(time.perf_counter() - t0, 4),
    }


def _leadership_pass(model: ClusterModel, leadership: Sequence[Goal], stats: list[dict]) -> None:
    """Run the leadership goals by reordering replica lists; their moves add to the
    goal's statistics, or to a row of their own for a goal not run before."""
    by_name = {st["name"]: st for st in stats}
    for g in leadership:
        t0 = time.perf_counter()
        before = g.violation(model)
        c = model.counter(g.name)
        moves_before = c.leader_moves
        g.prepare(model)
        g.optimize(model)
        g.register(model)
        st = by_name.get(g.name)
        if st is None:  # not among the goals of the mode or request: reported on its own
            st = {
                **g.describe(),
                "violation_before": before,
                "violation_after": g.violation(model),
                "satisfied": g.violation(model) == 0,
                "replica_moves": 0,
                "leadership_moves": 0,
                "swaps": 0,
                "seconds": 0.0,
            }
            stats.append(st)
        st["leadership_moves"] = c.leader_moves
        st["leadership_pass_moves"] = c.leader_moves - moves_before
        st["seconds"] = round(st["seconds"] + time.perf_counter() - t0, 4)


def _trim_and_polish(model: ClusterModel, goals: Sequence[Goal], stats: list[dict]) -> None:
    """Give back the moves no goal needs at the end (trim.py), polish (polish.py),
    give back once more; each polish move counts under the goal it serves."""
    model.trimmed = trim(model)
    before_polish = {n: _moves(model, n) for n in GOAL_OF.values()}
    model.polished = polish(model, goals)
    for st in stats:
        if st["name"] in before_polish:
            r0, l0, s0 = before_polish[st["name"]]
            r1, l1, s1 = _moves(model, st["name"])
            st["replica_moves"] += r1 - r0
            st["leadership_moves"] += l1 - l0
            st["swaps"] += s1 - s0
            st["polish_moves"] = (r1 - r0) + (l1 - l0)
    # once more: the polish moves free room on brokers a give-back had to skip
    model.trimmed += trim(model)


def _moves(model: ClusterModel, name: str) -> tuple[int, int, int]:
    c = model.counter(name)
    return c.replica_moves, c.leader_moves, c.swaps
