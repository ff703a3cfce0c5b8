"""The periodic balancer: look at one cluster, decide whether a plan is needed, propose it.

Triggers, in order of precedence:
 1. a broker holding managed replicas has been dead longer than the grace delay
    (self-healing: only what the dead brokers force moves);
 2. an alive broker holds no managed replica (a new, empty broker: load moves onto it);
 3. a goal is violated beyond its threshold (full rebalance).
While a dead broker is still within its grace delay nothing is proposed: a broker
that is merely restarting should not cause data to be copied.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from apps.clusters.models import Cluster

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
    """One detection round. Returns the open proposal afterwards (new or kept), or None."""
    now = now or timezone.now()
    policy = policy_get(cluster=cluster)
    ClusterPolicy.objects.filter(pk=policy.pk).update(last_detection_at=now)
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
        violated = _violated_goals(proposal.report)
        if not violated:
            return open_plan
        trigger = "goals violated: " + "; ".join(violated)
    if not proposal.plan["partitions"]:
        return open_plan
    if open_plan is not None and open_plan.reassignment == proposal.plan:
        return open_plan  # same proposal as before: keep it, don't churn the audit trail
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


def _dead_since(broker) -> datetime:
    # last_seen is when a sync last saw it alive; a broker never seen counts from first_seen.
    return broker.last_seen or broker.first_seen


# Every goal the engine judges may propose a full rebalance, but these two: leader bytes
# in follow the traffic of the last window and per-topic counts are a tie-break, so a
# plan for either alone would churn. They are still optimised when a plan is made.
QUIET_GOALS = frozenset({"leader-bytes-in-distribution", "topic-replica-distribution"})


def _violated_goals(report: dict) -> list[str]:
    """Goals the cluster violates *as it is* (the engine's judgement before anything
    moves, BALANCING.md §8), and only those the plan improves: a violation no plan can
    reduce is not worth proposing. Each is said with its worst broker and side."""
    out = []
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
        out.append(f"{goal['name']}: {worst}{extra}{threshold}")
    return out


__all__ = ["clusters_due_for_detection", "cluster_detect"]
