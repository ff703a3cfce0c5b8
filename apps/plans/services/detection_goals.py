"""What a detection round reads from the engine's judgement of the cluster as it is:
the goals worth a proposal, and whether a traffic violation is confirmed."""

from datetime import datetime

from apps.balancer.engine import SnapshotWindow

from ..models import ClusterPolicy

# Goals judged on measured traffic, which a short spike can violate for one window.
TRAFFIC_GOALS = ("disk-distribution", "network-in-distribution", "network-out-distribution")


def violation_acts_at_once(
    *, policy: ClusterPolicy, report: dict, violated: dict[str, str]
) -> bool:
    """A traffic violation skips the next slide's confirmation when nobody has to
    review the plan (the policy would approve its size at once) and it is clear: every
    violated goal's worst broker is outside its band by at least the band's own margin
    (1.20 x mean for a 1.10 band). A marginal one still waits a slide: a plan awaiting
    a human holds still anyway (proposal_hold.py), one that runs at once must not
    chase a spike."""
    limit = policy.auto_approve_max_bytes
    if limit is None or report.get("movement", {}).get("bytes_moved", limit) >= limit:
        return False
    for goal in report.get("goals", []):
        if goal["name"] not in violated:
            continue
        offenders = goal["start"]["offenders"]
        worst = offenders[0] if offenders else {}
        ratio, band = worst.get("ratio"), worst.get("band_ratio")
        if ratio is None or not band:
            return False
        lo, hi = band
        if worst["side"] == "above" and (hi is None or ratio < hi + (hi - 1.0)):
            return False
        if worst["side"] == "below" and (lo is None or ratio > lo - (1.0 - lo)):
            return False
    return True


def violation_remember(*, policy: ClusterPolicy, window_start: datetime | None) -> None:
    if policy.violation_window_start != window_start:
        ClusterPolicy.objects.filter(pk=policy.pk).update(violation_window_start=window_start)
        policy.violation_window_start = window_start


def violation_persists(*, policy: ClusterPolicy, window: SnapshotWindow | None) -> bool:
    """True when an earlier window already showed a traffic violation.

    The first window showing one is remembered; any later window showing one
    confirms it (usually the next slide's; when a run stored several windows at
    once, the newest). A judged window without a violation forgets it, and so
    does a proposal.
    """
    if window is None:
        return False
    current = datetime.fromisoformat(window.start.replace("Z", "+00:00"))
    seen = policy.violation_window_start
    if seen is not None and seen < current:
        return True
    if seen is None or current < seen:
        violation_remember(policy=policy, window_start=current)
    return False


# Every goal the engine judges may propose a full rebalance, but these two: leader bytes
# in follow the traffic of the last window and per-topic counts are a tie-break, so a
# plan for either alone would churn. They are still optimised when a plan is made.
QUIET_GOALS = frozenset({"leader-bytes-in-distribution", "topic-replica-distribution"})


def goals_violated(report: dict) -> dict[str, str]:
    """Goals the cluster violates *as it is* (the engine's judgement before anything
    moves, BALANCING.md §8), and only those the plan improves: a violation no plan can
    reduce is not worth proposing: goal name -> the goal said with its worst broker and
    side."""
    out = {}
    for goal in report.get("goals", []):
        start, end = goal["start"], goal["end"]
        if goal["name"] in QUIET_GOALS or not start["violated"]:
            continue
        if end["violation"] >= start["violation"] * (1 - 1e-9):
            continue
        worst = start["offenders"][0]["text"] if start["offenders"] else "violated"
        more = start["offenders_total"] - 1
        extra = f" (+{more} more)" if more > 0 else ""
        threshold = f", threshold {goal['threshold']:g}" if goal.get("threshold") else ""
        out[goal["name"]] = f"{goal['name']}: {worst}{extra}{threshold}"
    return out
