"""Drive the goals in priority order.

Hard goals become constraints before anything moves, so no move of any goal can
make a hard goal worse. Each soft goal becomes a constraint once optimised, so a
later goal can't break an earlier one (Cruise Control's rule).
"""

from __future__ import annotations

import time

from .goals import Goal
from .model import ClusterModel


def run(model: ClusterModel, goals: list[Goal]) -> list[dict]:
    """Optimise `model` in place; return per-goal statistics in priority order.

    Each goal's judgement (BALANCING.md §8) is taken on the cluster as it is, before
    anything moves (`start`), and on the final assignment (`end`)."""
    start = [g.judge(model) for g in goals]
    for g in goals:
        if g.hard:
            g.register(model)
    stats = []
    for g in goals:
        t0 = time.perf_counter()
        before = g.violation(model)
        g.prepare(model)
        g.optimize(model)
        if not g.hard:
            g.register(model)
        after = g.violation(model)
        c = model.counter(g.name)
        stats.append(
            {
                **g.describe(),
                "violation_before": before,
                "violation_after": after,
                "satisfied": after == 0,
                "replica_moves": c.replica_moves,
                "leadership_moves": c.leader_moves,
                "swaps": c.swaps,
                "seconds": round(time.perf_counter() - t0, 4),
            }
        )
    # measured again at the end: a goal satisfied in its turn must still be satisfied
    for g, st, first in zip(goals, stats, start, strict=True):
        end = g.judge(model)
        st["violation_final"] = end["violation"]
        st["satisfied_final"] = not end["violated"]
        st["start"] = first
        st["end"] = end
    return stats
