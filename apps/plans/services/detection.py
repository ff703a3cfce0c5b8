"""The periodic balancer: look at one cluster, decide whether a plan is needed, propose it.

Triggers, in order of precedence:
 1. a broker holding managed replicas has been dead longer than the grace delay
    (self-healing: only what the dead brokers force moves);
 2. an alive broker holds no managed replica (a new, empty broker: load moves onto it);
 3. a goal is violated beyond its threshold (full rebalance).
While a dead broker is still within its grace delay nothing is proposed: a broker
that is merely restarting should not cause data to be copied.

Runs on the periodic tick and as soon as new loads are stored (plans.receivers);
a round never proposes from loads older than the newest stored window.
"""

import logging
import math
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.clusters.models import Cluster
from apps.metrics.selectors import latest_window_start

from ..errors import PlanRequestInvalid
from ..models import ACTIVE_STATES, ClusterPolicy, Plan, PlanMode, PlanOrigin
from ..selectors import plan_open_get, snapshot_build
from .actors import DETECTOR
from .creation import plan_create_from_proposal
from .decisions import plan_stale_check
from .planner import planner_run
from .policy import policy_get

logger = logging.getLogger(__name__)


def clusters_due_for_detection(*, now: datetime | None = None) -> list[int]:
    """Ids of clusters whose policy interval has elapsed since their last detection."""
    now = now or timezone.now()
    due = []
    for cluster in Cluster.objects.all():
        policy = policy_get(cluster=cluster)
        if not policy.detection_enabled:
            continue
        last = policy.last_detection_at
        if last is None or now - last >= timedelta(seconds=policy.detection_interval):
            due.append(cluster.pk)
    return due


def _sync_fresh(cluster: Cluster, now: datetime) -> bool:
    # Planning on a model older than a few sync rounds would move partitions that are
    # no longer where we think they are.
    if cluster.last_sync_error or cluster.last_synced_at is None:
        return False
    max_age = max(3 * float(settings.CLUSTER_SYNC_INTERVAL), 30.0)
    return (now - cluster.last_synced_at).total_seconds() <= max_age


def cluster_detect(*, cluster: Cluster, now: datetime | None = None) -> Plan | None:
    """One detection round. Returns the open proposal afterwards (new or kept), or None.

    One round per cluster at a time (the policy row is locked for the round): the
    tick and a new window arriving together would otherwise both propose.
    """
    now = now or timezone.now()
    policy = policy_get(cluster=cluster)
    with transaction.atomic():
        ClusterPolicy.objects.select_for_update().filter(pk=policy.pk).update(last_detection_at=now)
        return _cluster_detect_locked(cluster=cluster, policy=policy, now=now)


def _loads_outdated(*, cluster: Cluster, snapshot: dict) -> bool:
    """A window newer than the snapshot's was stored meanwhile: its own detection comes."""
    newest = latest_window_start(cluster=cluster)
    window = snapshot.get("window")
    if newest is None:
        return False
    if window is None:
        return True
    return newest.strftime("%Y-%m-%dT%H:%M:%SZ") > window["start"]


def _cluster_detect_locked(
    *, cluster: Cluster, policy: ClusterPolicy, now: datetime
) -> Plan | None:
    if not policy.detection_enabled:
        return None
    cluster.refresh_from_db()
    if not _sync_fresh(cluster, now):
        logger.info("detection on %s skipped: the cluster model is not fresh", cluster.name)
        return None
    if Plan.objects.filter(cluster=cluster, state__in=ACTIVE_STATES).exists():
        return None  # one change at a time; look again when it is done
    open_plan = plan_open_get(cluster=cluster)
    if open_plan is not None and plan_stale_check(plan=open_plan, actor=DETECTOR):
        open_plan = None

    scoped = snapshot_build(cluster=cluster, policy=policy)
    snapshot = scoped.snapshot
    if not snapshot["partitions"]:
        return open_plan
    hosted: dict[int, int] = {}
    for p in snapshot["partitions"]:
        for b in p["replicas"]:
            hosted[b] = hosted.get(b, 0) + 1
    brokers = {b.node_id: b for b in cluster.brokers.all()}
    dead = [b["id"] for b in snapshot["brokers"] if not b["alive"] and hosted.get(b["id"])]
    grace = timedelta(seconds=policy.dead_broker_grace)

    mode, target_brokers, trigger = None, [], ""
    if dead:
        overdue = [b for b in dead if now - _dead_since(brokers[b]) >= grace]
        if not overdue:
            return open_plan
        under = sum(1 for p in snapshot["partitions"] if set(p["replicas"]) & set(dead))
        mode = PlanMode.FIX_OFFLINE
        trigger = (
            "; ".join(
                f"broker {b} dead for {int((now - _dead_since(brokers[b])).total_seconds())} s "
                f"(grace {policy.dead_broker_grace} s)"
                for b in overdue
            )
            + f"; {under} managed partition(s) have a replica on a dead broker"
        )
    else:
        alive = [b["id"] for b in snapshot["brokers"] if b["alive"]]
        empty = [b for b in alive if not hosted.get(b)]
        if empty and len(empty) < len(alive):
            mode, target_brokers = PlanMode.ADD_BROKERS, empty
            trigger = ", ".join(f"broker {b}" for b in empty) + " alive but holds no replica"
        else:
            mode = PlanMode.FULL

    try:
        proposal = planner_run(scoped=scoped, policy=policy, mode=mode, brokers=target_brokers)
    except PlanRequestInvalid as exc:
        logger.warning("detection on %s: %s", cluster.name, exc)
        return open_plan
    if mode == PlanMode.FULL:
        window = snapshot.get("window")
        violated = _violated_goals(proposal.report, policy)
        if window is None:
            # Before the first window every load reads zero: judge no traffic goal.
            violated = [v for v in violated if not _is_traffic_goal(v)]
        if not violated:
            _violation_remember(policy=policy, window_start=None)
            return open_plan
        if all(_is_traffic_goal(v) for v in violated) and not _violation_persists(
            policy=policy, window=window
        ):
            return open_plan  # one slide's spike: wait for the next window to confirm it
        trigger = "goals violated: " + ", ".join(violated)
        proposal = _towards_target(scoped=scoped, policy=policy, judged=proposal)
        if window is None:
            trigger += "; no load window yet: counts only, traffic goals not judged"
    if not proposal.plan["partitions"]:
        return open_plan
    if _loads_outdated(cluster=cluster, snapshot=snapshot):
        logger.info("detection on %s dropped: newer loads were stored meanwhile", cluster.name)
        return open_plan
    if open_plan is not None and open_plan.reassignment == proposal.plan:
        return open_plan  # same proposal as before: keep it, don't churn the audit trail
    _violation_remember(policy=policy, window_start=None)
    return plan_create_from_proposal(
        cluster=cluster,
        scoped=scoped,
        proposal=proposal,
        origin=PlanOrigin.DETECTOR,
        mode=mode,
        brokers=target_brokers,
        trigger=trigger,
        actor=DETECTOR,
    )


def _towards_target(*, scoped, policy: ClusterPolicy, judged):
    """Judged at the threshold, planned towards the tighter target, so the result does
    not sit just inside the threshold. Kept only if it still mends what was violated
    (a target out of reach can leave the engine unable to improve anything)."""
    if float(policy.balance_target) >= float(policy.balance_threshold):
        return judged
    try:
        aimed = planner_run(scoped=scoped, policy=policy, mode=PlanMode.FULL, aim_at_target=True)
    except PlanRequestInvalid:
        return judged
    return aimed if aimed.plan["partitions"] and _violated_goals(aimed.report, policy) else judged


# Goals judged on measured traffic, which a short spike can violate for one window.
TRAFFIC_GOALS = ("disk-distribution", "network-in-distribution", "network-out-distribution")


def _is_traffic_goal(violation: str) -> bool:
    return violation.split(" ", 1)[0] in TRAFFIC_GOALS


def _violation_remember(*, policy: ClusterPolicy, window_start: datetime | None) -> None:
    if policy.violation_window_start != window_start:
        ClusterPolicy.objects.filter(pk=policy.pk).update(violation_window_start=window_start)
        policy.violation_window_start = window_start


def _violation_persists(*, policy: ClusterPolicy, window: dict | None) -> bool:
    """True when an earlier window already showed a traffic violation.

    The first window showing one is remembered; any later window showing one
    confirms it (usually the next slide's; when a run stored several windows at
    once, the newest). A judged window without a violation forgets it, and so
    does a proposal.
    """
    if window is None:
        return False
    current = datetime.fromisoformat(window["start"].replace("Z", "+00:00"))
    seen = policy.violation_window_start
    if seen is not None and seen < current:
        return True
    if seen is None or current < seen:
        _violation_remember(policy=policy, window_start=current)
    return False


def _dead_since(broker) -> datetime:
    # last_seen is when a sync last saw it alive; a broker never seen counts from first_seen.
    return broker.last_seen or broker.first_seen


# Balance figures of the report (BALANCING.md §4) and the goal each one measures.
RESOURCE_GOALS = {
    "replicas": "replica-distribution",
    "leaders": "leader-distribution",
    "disk": "disk-distribution",
    "network_in": "network-in-distribution",
    "network_out": "network-out-distribution",
}
COUNT_RESOURCES = ("replicas", "leaders")


def _violated_goals(report: dict, policy: ClusterPolicy) -> list[str]:
    """Goals the cluster violates *as it is* (not after earlier goals moved things), and
    only those the plan improves: a violation no plan can reduce is not worth proposing."""
    enabled = set(policy.goals or [])
    thresholds = policy.goal_thresholds or {}
    out = []
    for goal in report.get("goals", []):
        # Hard goals are measured before anything moves.
        if goal.get("hard") and goal.get("violation_before", 0) > goal.get("violation_after", 0):
            out.append(goal["name"])
    for resource, figures in (report.get("balance") or {}).items():
        goal = RESOURCE_GOALS.get(resource)
        if goal is None or (enabled and goal not in enabled):
            continue
        t = float(thresholds.get(goal, policy.balance_threshold))
        ideal = float(figures.get("ideal") or 0.0)
        if ideal <= 0:
            continue
        if resource in COUNT_RESOURCES:
            # Counts: balanced within floor/ceil of the ideal, widened by the threshold.
            hi = max(math.ceil(ideal - 1e-9), math.floor(ideal * t + 1e-9)) / ideal
            lo = min(math.floor(ideal + 1e-9), math.ceil(ideal * (2.0 - t) - 1e-9)) / ideal
        else:
            hi, lo = t, 2.0 - t
        before_hi, after_hi = figures["before"], figures["after"]
        before_lo, after_lo = figures.get("min_before", 1.0), figures.get("min_after", 1.0)
        too_high = before_hi > hi + 1e-9 and after_hi < before_hi - 1e-9
        too_low = before_lo < lo - 1e-9 and after_lo > before_lo + 1e-9
        if too_high or too_low:
            out.append(f"{goal} (max {before_hi:.2f} x mean, threshold {t:g})")
    return out


__all__ = ["clusters_due_for_detection", "cluster_detect"]
