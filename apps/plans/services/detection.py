"""The periodic balancer: look at one cluster, decide whether a plan is needed, propose it.

Triggers, in order of precedence:
 1. a broker holding managed replicas has been dead longer than the grace delay
    (self-healing: only what the dead brokers force moves);
 2. an alive broker holds no managed replica (a new, empty broker: load moves onto it);
 3. a goal is violated beyond its threshold (full rebalance).
While a dead broker is still within its grace delay nothing is proposed: a broker
that is merely restarting should not cause data to be copied. Self-healing does not
wait for the next periodic round either: when a sync sees a broker die, and whenever a
round finds one still within its grace, a re-check (sync, then detect) is scheduled
for the moment the grace ends.

It also runs as soon as new loads are stored (plans.receivers); a round never
proposes from loads older than the newest stored window.

An open proposal holds still while the cluster it was made for is unchanged
(proposal_hold.py); when it changed, the proposal is superseded, or stale when
nothing is needed now, with what changed as the reason.
"""

import logging
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import chain

from django.conf import settings
from django.utils import timezone

from apps.balancer import engine
from apps.balancer.engine import ClusterSnapshot
from apps.clusters.models import Cluster, ClusterRound
from apps.clusters.rounds import round_lease
from apps.clusters.services import cluster_sync
from apps.clusters.sync_outcome import SyncOutcome
from apps.metrics.selectors import latest_window_start

from ..actions import PlanAction
from ..errors import PlanRequestInvalid, PlanStale, PlanStateError
from ..models import ACTIVE_STATES, ClusterPolicy, Plan, PlanMode, PlanOrigin, PlanState
from ..queue import recheck_schedule
from ..selectors import (
    ScopedSnapshot,
    basis_changes,
    demoted_broker_ids,
    plan_open_get,
    proposal_basis,
    slow_brokers_get,
    snapshot_build,
)
from .actors import DETECTOR
from .creation import plan_create_from_proposal
from .decisions import plan_stale_check
from .detection_goals import (
    TRAFFIC_GOALS,
    goals_violated,
    violation_acts_at_once,
    violation_persists,
    violation_remember,
)
from .planner import planner_run
from .policy import policy_get
from .proposal_hold import proposal_hold_check
from .transitions import plan_transition

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

    One round per cluster at a time, under the cluster's detection round lease (the
    tick and a new window arriving together would otherwise both propose); a round
    due while one runs is skipped and counted. No transaction is open while it reads
    Kafka or runs the planner: only storing the plan is atomic, and that re-checks
    the placement it was planned from (plan_create).
    """
    now = now or timezone.now()
    policy = policy_get(cluster=cluster)
    with round_lease(cluster=cluster, kind=ClusterRound.DETECTION) as lease:
        if lease is None:
            return plan_open_get(cluster=cluster)
        ClusterPolicy.objects.filter(pk=policy.pk).update(last_detection_at=now)
        return _cluster_detect_locked(cluster=cluster, policy=policy, now=now)


def _loads_outdated(*, cluster: Cluster, snapshot: ClusterSnapshot) -> bool:
    """A window newer than the snapshot's was stored meanwhile: its own detection comes."""
    newest = latest_window_start(cluster=cluster)
    if newest is None:
        return False
    if snapshot.window is None:
        return True
    return newest.strftime("%Y-%m-%dT%H:%M:%SZ") > snapshot.window.start


@dataclass(frozen=True)
class _Wanted:
    """What this round would propose."""

    proposal: engine.Proposal
    mode: str
    brokers: list[int]
    trigger: str


# A round that must not touch the open proposal (a broker within its grace, newer loads
# coming, the planner refusing): neither keep-and-note nor replace.
_SKIP = object()


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
    if not scoped.snapshot.partitions:
        return open_plan
    wanted = _proposal_wanted(cluster=cluster, policy=policy, scoped=scoped, now=now)
    if wanted is _SKIP or (wanted is None and open_plan is None):
        return open_plan
    # A sort of every managed partition (bench_control_plane's detection round): only
    # when a plan is at stake.
    basis = proposal_basis(snapshot=scoped.snapshot, policy=policy)
    changes = []
    if open_plan is not None and "basis" in open_plan.report:
        changes = basis_changes(before=open_plan.report["basis"], now=basis)
    if wanted is None:
        if open_plan is not None and changes:
            _stale(plan=open_plan, changes=changes)
            _note(policy=policy, text=f"plan #{open_plan.pk} went stale; nothing to propose")
            return None
        return open_plan
    assert isinstance(wanted, _Wanted)
    supersede_reason = ""
    if open_plan is not None:
        if changes:
            supersede_reason = "the cluster changed since it was proposed: " + "; ".join(changes)
        else:
            hold = proposal_hold_check(
                open_plan=open_plan,
                scoped=scoped,
                policy=policy,
                proposal=wanted.proposal,
                mode=wanted.mode,
                brokers=wanted.brokers,
                now=now,
            )
            if hold.keep:
                _note(policy=policy, text=hold.reason)
                return open_plan
            supersede_reason = hold.reason
    violation_remember(policy=policy, window_start=None)
    try:
        plan = plan_create_from_proposal(
            cluster=cluster,
            scoped=scoped,
            proposal=wanted.proposal,
            origin=PlanOrigin.DETECTOR,
            mode=wanted.mode,
            brokers=wanted.brokers,
            trigger=wanted.trigger,
            actor=DETECTOR,
            basis=basis,
            supersede_reason=supersede_reason,
        )
    except PlanStale as exc:
        _note(policy=policy, text=f"nothing proposed: {exc}")
        return open_plan
    _note(
        policy=policy,
        text=f"proposed plan #{plan.pk}" + (f" ({supersede_reason})" if supersede_reason else ""),
    )
    return plan


def _proposal_wanted(
    *, cluster: Cluster, policy: ClusterPolicy, scoped: ScopedSnapshot, now: datetime
) -> "_Wanted | object | None":
    """The plan this round would propose, None when the cluster needs none, or _SKIP."""
    snapshot = scoped.snapshot
    # Counted in C: a Python loop over every replica costs far more.
    hosted = Counter(chain.from_iterable(p.replicas for p in snapshot.partitions))
    need = _need_read(cluster=cluster, policy=policy, snapshot=snapshot, hosted=hosted, now=now)
    if need is _SKIP:
        return _SKIP
    mode, target_brokers, trigger = need
    try:
        proposal = planner_run(scoped=scoped, policy=policy, mode=mode, brokers=target_brokers)
    except PlanRequestInvalid as exc:
        logger.warning("detection on %s: %s", cluster.name, exc)
        return _SKIP
    if mode == PlanMode.FULL:
        judged = _full_rebalance_judge(
            cluster=cluster, policy=policy, scoped=scoped, proposal=proposal, now=now
        )
        if judged is None or judged is _SKIP:
            return judged
        proposal, trigger = judged
    _loads_wait_forget(policy=policy)
    if not proposal.plan["partitions"]:
        return None
    if _loads_outdated(cluster=cluster, snapshot=snapshot):
        logger.info("detection on %s dropped: newer loads were stored meanwhile", cluster.name)
        return _SKIP
    return _Wanted(proposal=proposal, mode=mode, brokers=target_brokers, trigger=trigger)


def _need_read(
    *,
    cluster: Cluster,
    policy: ClusterPolicy,
    snapshot: ClusterSnapshot,
    hosted: Counter,
    now: datetime,
) -> "tuple[str, list[int], str] | object":
    """(mode, brokers, trigger) in order of precedence: dead brokers past their grace,
    then brokers the canary finds slow (demoted), then empty alive brokers, else a full
    rebalance; _SKIP while a dead broker is
    within its grace (a re-check is scheduled for when it ends)."""
    brokers = {b.node_id: b for b in cluster.brokers.all()}
    dead = [b.id for b in snapshot.brokers if not b.alive and hosted.get(b.id)]
    if dead:
        grace = timedelta(seconds=policy.dead_broker_grace)
        overdue = [b for b in dead if now - _dead_since(brokers[b]) >= grace]
        if not overdue:
            # Look again the moment the first grace ends, not at the next round.
            ends = min(_dead_since(brokers[b]) for b in dead) + grace
            recheck_schedule(cluster_id=cluster.pk, at=ends + RECHECK_MARGIN)
            return _SKIP
        dead_set = set(dead)
        under = sum(1 for p in snapshot.partitions if not dead_set.isdisjoint(p.replicas))
        # last_seen is the last sync that saw it answer: it died after that, so the
        # time since is an upper bound of how long it has been down.
        trigger = (
            "; ".join(
                f"broker {b} down: last seen alive "
                f"{int((now - _dead_since(brokers[b])).total_seconds())} s ago "
                f"(grace {policy.dead_broker_grace} s)"
                for b in overdue
            )
            + f"; {under} managed partition(s) have a replica on a dead broker"
        )
        return PlanMode.FIX_OFFLINE, [], trigger
    alive = [b.id for b in snapshot.brokers if b.alive]
    slow = slow_brokers_get(cluster=cluster)
    demoted = demoted_broker_ids(cluster=cluster)
    healing = [b for b in alive if b in slow and b not in demoted]
    if healing and len(healing) < len(alive):
        trigger = "; ".join(f"broker {b} slow: {slow[b]}" for b in healing)
        return PlanMode.DEMOTE, healing, trigger
    empty = [b for b in alive if not hosted.get(b)]
    if empty and len(empty) < len(alive):
        trigger = ", ".join(f"broker {b}" for b in empty) + " alive but holds no replica"
        return PlanMode.ADD_BROKERS, empty, trigger
    return PlanMode.FULL, [], ""


def _full_rebalance_judge(
    *,
    cluster: Cluster,
    policy: ClusterPolicy,
    scoped: ScopedSnapshot,
    proposal: engine.Proposal,
    now: datetime,
) -> "tuple[engine.Proposal, str] | object | None":
    """A full rebalance is proposed for violated goals only: (the proposal aimed at the
    target, its trigger); None when no goal is violated; _SKIP while a traffic
    violation waits for the next window's confirmation, or for the loads of moved
    partitions no window measured yet."""
    window = scoped.snapshot.window
    violated = goals_violated(proposal.report)
    if window is None:
        # Before the first window every load reads zero: judge no traffic goal.
        violated = {g: v for g, v in violated.items() if g not in TRAFFIC_GOALS}
    if not violated:
        violation_remember(policy=policy, window_start=None)
        _loads_wait_forget(policy=policy)
        return None
    if (
        all(g in TRAFFIC_GOALS for g in violated)
        and not violation_persists(policy=policy, window=window)
        and not violation_acts_at_once(policy=policy, report=proposal.report, violated=violated)
    ):
        return _SKIP  # one slide's spike: wait for the next window to confirm it
    trigger = "goals violated: " + "; ".join(violated.values())
    proposal = _towards_target(scoped=scoped, policy=policy, judged=proposal)
    unmeasured = _unmeasured_moved(snapshot=scoped.snapshot, plan=proposal.plan)
    if unmeasured and _loads_awaited(policy=policy, now=now):
        logger.info(
            "detection on %s: waiting for the loads of %d moved partition(s) no window "
            "measured yet",
            cluster.name,
            unmeasured,
        )
        return _SKIP
    if window is None:
        trigger += "; no load window yet: counts only, traffic goals not judged"
    elif unmeasured:
        trigger += f"; {unmeasured} moved partition(s) not measured yet: counted only"
    return proposal, trigger


def _unmeasured_moved(*, snapshot: ClusterSnapshot, plan: dict) -> int:
    """How many partitions `plan` moves that the snapshot's window did not measure."""
    moved = {(e["topic"], e["partition"]) for e in plan["partitions"]}
    return sum(
        1
        for p in snapshot.partitions
        if p.key in moved and (p.load is None or p.load.get("bytes_in") is None)
    )


def _loads_awaited(*, policy: ClusterPolicy, now: datetime) -> bool:
    """True while a rebalance should still wait for loads (PLAN_LOADS_WAIT_SECONDS from
    the first round that had to wait): the first plan for a new topic, or for a
    cluster without a window yet, then judges traffic instead of counting replicas."""
    since = policy.loads_wait_since
    if since is None:
        ClusterPolicy.objects.filter(pk=policy.pk).update(loads_wait_since=now)
        policy.loads_wait_since = since = now
    return (now - since).total_seconds() < float(settings.PLAN_LOADS_WAIT_SECONDS)


def _loads_wait_forget(*, policy: ClusterPolicy) -> None:
    if policy.loads_wait_since is not None:
        ClusterPolicy.objects.filter(pk=policy.pk).update(loads_wait_since=None)
        policy.loads_wait_since = None


def _stale(*, plan: Plan, changes: list[str]) -> None:
    try:
        plan_transition(
            plan=plan,
            to=PlanState.STALE,
            actor=DETECTOR,
            action=PlanAction.STALE,
            reason="the cluster changed since it was proposed: " + "; ".join(changes),
        )
    except PlanStateError:
        pass  # decided meanwhile


def _note(*, policy: ClusterPolicy, text: str) -> None:
    """Why the last round did what it did, for the cluster page (not audited: a round
    that keeps a proposal changes nothing)."""
    logger.info("detection on cluster %s: %s", policy.cluster_id, text)
    ClusterPolicy.objects.filter(pk=policy.pk).update(last_detection_outcome=text[:1000])


def cluster_recheck(*, cluster: Cluster) -> Plan | None:
    """A scheduled re-check: sync, so the decision is made on what Kafka says now (the
    broker may be back), then detect. A sync already running brings the model up to
    date itself: the re-check is made again a few seconds later."""
    outcome = cluster_sync(cluster=cluster)
    if outcome is SyncOutcome.SKIPPED:
        logger.info(
            "re-check of %s: a sync of it is running; re-checking in %s s",
            cluster.name,
            int(RECHECK_RETRY.total_seconds()),
        )
        recheck_schedule(cluster_id=cluster.pk, at=timezone.now() + RECHECK_RETRY)
        return None
    if not outcome:
        logger.info(
            "re-check of %s: sync failed (%s); the periodic round looks again",
            cluster.name,
            cluster.last_sync_error,
        )
        return None
    return cluster_detect(cluster=cluster)


# A re-check that found a sync running waits this long for it.
RECHECK_RETRY = timedelta(seconds=5)


def dead_broker_recheck_schedule(*, cluster: Cluster, node_id: int, at: datetime) -> None:
    """A sync saw broker `node_id` stop answering at `at`: re-check when its grace ends."""
    policy = policy_get(cluster=cluster)
    if not policy.detection_enabled:
        return
    broker = cluster.brokers.filter(node_id=node_id).first()
    since = _dead_since(broker) if broker is not None else None
    recheck_schedule(
        cluster_id=cluster.pk,
        at=(since or at) + timedelta(seconds=policy.dead_broker_grace) + RECHECK_MARGIN,
    )


# Past the grace by this much, so the re-check finds the broker overdue, not a hair short.
RECHECK_MARGIN = timedelta(seconds=1)


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
    return aimed if aimed.plan["partitions"] and goals_violated(aimed.report) else judged


def _dead_since(broker) -> datetime:
    # last_seen is when a sync last saw it alive; a broker never seen counts from first_seen.
    return broker.last_seen or broker.first_seen


__all__ = [
    "cluster_detect",
    "cluster_recheck",
    "clusters_due_for_detection",
    "dead_broker_recheck_schedule",
]
