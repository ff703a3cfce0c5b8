"""A lower bound on the leader ratio reordering alone can reach, network out held.

Used by bench_planner_small_cluster.py and bench_planner_leadership.py to show, next
to the planner's leader figure, the best any reorder of the final replica lists can
do while no broker's network out ends above max(threshold x ideal, what it carries
after the plan) (the planner's "never worse" rule, from the network-out goal).

For a candidate maximum M of leaders per broker, the `heavy` partitions with the
most leader network out are enumerated (every choice of leader among their usable
replicas); for each choice every broker gets `slots` = min(M - heavy leaders it
got, the most light partitions it could lead within its network-out room taking
the lightest first). Light partitions then need a leader each, at most `slots` per
broker: by Hall's theorem that is possible iff for every set S of brokers the
light partitions whose replicas all lie in S number at most the slots of S. Both
steps only relax the real problem, so when no heavy choice passes, no reorder has
at most M leaders per broker: the bound is the smallest M that passes, over the
ideal (leaders / usable brokers). Exact for the count alone (no network out
limit), and never above what a reorder can reach.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

MAX_BROKERS = 12  # 2^brokers subsets of brokers are checked
MAX_CHOICES = 4096  # leader choices of the heavy partitions enumerated


def leader_bound(
    replicas: list[list[int]],
    lout: list[float],
    usable: list[int],
    nw_out_after: dict[int, float],
    threshold: float,
    capacity: dict[int, float] | None = None,
) -> float | None:
    """Smallest leaders-per-broker over ideal reachable by reordering `replicas`
    (broker ids, final lists) with network out per broker at most
    max(threshold x ideal, its value after the plan); None when the cluster is too
    big to check (more than MAX_BROKERS usable brokers)."""
    n = len(usable)
    if n == 0 or n > MAX_BROKERS:
        return None
    pos = {b: i for i, b in enumerate(usable)}
    cands = [[pos[b] for b in r if b in pos] for r in replicas]
    keep = [i for i, c in enumerate(cands) if c]
    if not keep:
        return 1.0
    cands = [cands[i] for i in keep]
    load = np.array([lout[i] for i in keep], dtype=np.float64)
    cap = np.array([(capacity or {}).get(b, 1.0) for b in usable], dtype=np.float64)
    ideal_util = float(load.sum()) / float(cap.sum())
    after = np.array([nw_out_after.get(b, 0.0) for b in usable]) / cap
    limit = np.maximum(threshold * ideal_util, after) * cap * (1 + 1e-9) + 1e-9
    ideal = len(cands) / n

    # heavy partitions: as many of the largest as MAX_CHOICES allows
    order = np.argsort(-load, kind="stable").tolist()
    heavy: list[int] = []
    combos = 1
    for i in order:
        if combos * len(cands[i]) > MAX_CHOICES:
            break
        combos *= len(cands[i])
        heavy.append(i)
    light = [i for i in order if i not in set(heavy)]

    # per broker, cumulative network out of the lightest light partitions it may lead
    cum = []
    for b in range(n):
        ls = np.sort(np.array([load[i] for i in light if b in cands[i]]))
        cum.append(np.concatenate(([0.0], np.cumsum(ls))))
    # Hall: light partitions whose candidates lie within each subset of brokers
    masks = np.zeros(1 << n, dtype=np.int64)
    for i in light:
        masks[sum(1 << b for b in cands[i])] += 1
    subsets = np.arange(1 << n)
    within = (subsets[None, :] & ~subsets[:, None]) == 0  # within[S, m]: m inside S
    need = within.astype(np.int64) @ masks
    bits = ((subsets[:, None] >> np.arange(n)[None, :]) & 1).astype(np.int64)

    choices = []
    for pick in itertools.product(*[cands[i] for i in heavy]):
        cnt = np.bincount(np.array(pick, dtype=np.int64), minlength=n)
        nw = np.bincount(np.array(pick, dtype=np.int64), weights=load[heavy], minlength=n)
        if (nw <= limit).all():
            choices.append((cnt, nw))
    if not choices:
        return math.inf
    cnts = np.array([c for c, _ in choices])
    room = limit[None, :] - np.array([w for _, w in choices])
    fit = np.stack(
        [np.searchsorted(cum[b], room[:, b], side="right") - 1 for b in range(n)], axis=1
    )
    for m in range(math.ceil(ideal - 1e-9), len(cands) + 1):
        slots = np.minimum(m - cnts, fit)
        ok = (slots >= 0).all(axis=1)
        if not ok.any():
            continue
        have = bits @ np.maximum(slots[ok], 0).T  # (subsets, choices)
        if ((have >= need[:, None]).all(axis=0)).any():
            return m / ideal
    return math.inf


def leader_figures(snap: dict, plan: dict, usable: list[int], threshold: float = 1.10) -> dict:
    """The reorder bound for the plan's final replica lists, and why the leaders
    above the band stay there: per such broker, its network out over the ideal and
    the lightest leadership it could hand over, and the network out of the brokers
    with room for another leader (against the network-out band)."""
    after = {(e["topic"], e["partition"]): e["replicas"] for e in plan["partitions"]}
    reps = [after.get((p["topic"], p["partition"]), p["replicas"]) for p in snap["partitions"]]
    lout = [
        p["load"].get("bytes_out", 0.0) + p["load"].get("bytes_in", 0.0) * (len(r) - 1)
        for p, r in zip(snap["partitions"], reps, strict=True)
    ]
    caps = {b["id"]: (b.get("capacity") or {}).get("network_out") for b in snap["brokers"]}
    capacity = caps if all(caps.get(b) for b in usable) else None
    cap = {b: (capacity or {}).get(b) or 1.0 for b in usable}
    leads: dict[int, list[float]] = {b: [] for b in usable}
    for r, lo in zip(reps, lout, strict=True):
        if r[0] in leads:
            leads[r[0]].append(lo)
    nw = {b: sum(v) for b, v in leads.items()}
    ideal_util = sum(nw.values()) / sum(cap.values())
    util = {b: nw[b] / cap[b] / ideal_util if ideal_util else 1.0 for b in usable}
    n_lead = sum(len(v) for v in leads.values())
    ideal = n_lead / len(usable)
    hi = max(math.ceil(ideal - 1e-9), math.floor(ideal * threshold + 1e-9))
    lo = min(math.floor(ideal + 1e-9), math.ceil(ideal * (2 - threshold) - 1e-9))
    room = [b for b in usable if len(leads[b]) < hi]
    why = []
    for b in usable:
        if len(leads[b]) > hi:
            light = min(leads[b]) / cap[b] / ideal_util if ideal_util else 0.0
            takers = ", ".join(f"{t} ({util[t]:.3f})" for t in room)
            why.append(
                f"broker {b} leads {len(leads[b])} (band {lo}-{hi}), network out "
                f"{util[b]:.3f}, lightest leadership {light:.3f}; brokers with room for a "
                f"leader (network out): {takers or 'none'}; network-out band "
                f"{2 - threshold:.2f}-{threshold:.2f}"
            )
    bound = leader_bound(reps, lout, usable, nw, threshold, capacity)
    return {"bound": bound, "why": why}
