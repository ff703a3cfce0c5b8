"""Whether an open proposal gives way to a new one while the cluster it was made for
is unchanged (its basis holds: selectors/proposal_basis.py).

A proposal awaiting a human holds still: it is replaced only once it has been open
PLAN_PROPOSAL_HOLD_SECONDS, and only by a plan that is better by
PLAN_PROPOSAL_BETTER_MARGIN. Both are judged by the engine on today's loads: the open
plan applied to the snapshot against what the new plan leaves, goal by goal in
priority order; the first goal on which they differ by more than the margin (of the
larger violation) decides. A plan an operator requested is left to the operator,
except for self-healing.
"""

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings

from apps.balancer import engine

from ..models import ClusterPolicy, Plan, PlanMode, PlanOrigin
from ..selectors import ScopedSnapshot, snapshot_with_assignment
from .planner import planner_options


@dataclass(frozen=True)
class HoldDecision:
    keep: bool
    reason: str


def proposal_hold_check(
    *,
    open_plan: Plan,
    scoped: ScopedSnapshot,
    policy: ClusterPolicy,
    proposal: engine.Proposal,
    mode: str,
    brokers: list[int],
    now: datetime,
) -> HoldDecision:
    """Keep `open_plan` or let `proposal` replace it (the basis holds for both)."""
    if open_plan.origin != PlanOrigin.DETECTOR and mode != PlanMode.FIX_OFFLINE:
        return HoldDecision(True, f"kept plan #{open_plan.pk}: an operator requested it")
    if open_plan.mode != mode or sorted(open_plan.brokers) != sorted(brokers):
        return HoldDecision(
            False, f"plan #{open_plan.pk} was a {open_plan.get_mode_display()} plan"
        )
    age = (now - open_plan.created_at).total_seconds()
    hold = float(settings.PLAN_PROPOSAL_HOLD_SECONDS)
    if age < hold:
        return HoldDecision(
            True,
            f"kept plan #{open_plan.pk}: open {age:.0f} s, held {hold:.0f} s "
            "while the cluster is unchanged",
        )
    applied = snapshot_with_assignment(
        snapshot=scoped.snapshot,
        replicas={
            (e["topic"], e["partition"]): e["replicas"]
            for e in open_plan.reassignment["partitions"]
        },
    )
    try:
        left_by_open = engine.judge(
            applied, mode=mode, brokers=brokers, options=planner_options(policy=policy)
        )
    except engine.BalancerError as exc:
        return HoldDecision(False, f"plan #{open_plan.pk} no longer fits the cluster: {exc}")
    left_by_new = {g["name"]: g["end"] for g in proposal.report.get("goals", [])}
    margin = float(settings.PLAN_PROPOSAL_BETTER_MARGIN)
    for goal in left_by_open:
        new = left_by_new.get(goal["name"])
        if new is None:
            continue
        before, after = float(goal["violation"]), float(new["violation"])
        if abs(before - after) <= margin * max(before, after):
            continue
        if after < before:
            return HoldDecision(
                False,
                f"a better plan than #{open_plan.pk}: {goal['name']} violation "
                f"{_figure(before)} -> {_figure(after)} on today's loads",
            )
        break
    return HoldDecision(
        True,
        f"kept plan #{open_plan.pk}: a new plan is not better by {margin:.0%} on today's loads",
    )


def _figure(x: float) -> str:
    return f"{x:.3g}"
