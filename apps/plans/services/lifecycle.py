"""Plan lifecycle: create (and supersede), approve, reject, cancel, rollback, policy.

Every change is checked against PLAN_TRANSITIONS, made with a conditional UPDATE
(so two operators or an operator and the detector can't both win), and recorded
in the audit trail in the same transaction.
"""

import logging
from collections.abc import Iterable
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from apps.audit.services import Actor, SystemActor, actor_policy, actor_system, audit_record
from apps.balancer import engine
from apps.clusters.models import Cluster

from ..errors import PlanPermissionDenied, PlanRequestInvalid, PlanStale, PlanStateError
from ..models import (
    PLAN_TRANSITIONS,
    ClusterPolicy,
    Execution,
    Plan,
    PlanMode,
    PlanMove,
    PlanOrigin,
    PlanState,
)
from ..queue import execution_enqueue
from ..selectors import (
    ScopedSnapshot,
    assignment_current,
    assignment_fingerprint,
    plan_fingerprint_current,
    snapshot_build,
)

logger = logging.getLogger(__name__)

PartitionKey = tuple[str, int]
DETECTOR = actor_system(name="detector")
REQUESTABLE_MODES = (
    PlanMode.FULL,
    PlanMode.ADD_BROKERS,
    PlanMode.REMOVE_BROKERS,
    PlanMode.FIX_OFFLINE,
    PlanMode.LEADERS,
)


# --- helpers -------------------------------------------------------------------------------


def _require(user: AbstractBaseUser, perm: str, what: str) -> None:
    if user is None or not user.is_authenticated or not user.has_perm(perm):
        raise PlanPermissionDenied(f"you are not allowed to {what}")


def _plan_summary(plan: Plan) -> dict[str, Any]:
    return {
        "state": plan.state,
        "mode": plan.mode,
        "origin": plan.origin,
        "partitions": plan.partition_count,
        "bytes_to_move": plan.bytes_to_move,
        "fingerprint": plan.fingerprint,
    }


def _transition(
    *,
    plan: Plan,
    to: str,
    actor: Actor,
    action: str,
    reason: str = "",
    client_address: str | None = None,
    fields: dict[str, Any] | None = None,
) -> Plan:
    """Move `plan` to state `to` if allowed and nobody else moved it meanwhile."""
    current = plan.state
    if to not in PLAN_TRANSITIONS.get(current, set()):
        raise PlanStateError(f"plan #{plan.pk} is {current}; it can't become {to}")
    values = {"state": to, **(fields or {})}
    with transaction.atomic():
        if not Plan.objects.filter(pk=plan.pk, state=current).update(**values):
            plan.refresh_from_db()
            raise PlanStateError(f"plan #{plan.pk} changed meanwhile; it is now {plan.state}")
        before = _plan_summary(plan)
        for key, value in values.items():
            setattr(plan, key, value)
        audit_record(
            actor=actor,
            action=action,
            obj=plan,
            before=before,
            after=_plan_summary(plan),
            reason=reason,
            client_address=client_address,
        )
    return plan


def policy_get(*, cluster: Cluster) -> ClusterPolicy:
    policy, _ = ClusterPolicy.objects.get_or_create(cluster=cluster)
    return policy


def planner_options(
    *, policy: ClusterPolicy, allow_data_loss: bool = False
) -> engine.PlannerOptions:
    goals = tuple(policy.goals) if policy.goals else None
    return engine.PlannerOptions(
        goals=goals,
        balance_threshold=float(policy.balance_threshold),
        thresholds=dict(policy.goal_thresholds or {}),
        allow_data_loss=allow_data_loss,
    )


def planner_run(
    *,
    scoped: ScopedSnapshot,
    policy: ClusterPolicy,
    mode: str,
    brokers: Iterable[int] = (),
    allow_data_loss: bool = False,
) -> engine.Proposal:
    try:
        return engine.propose(
            scoped.snapshot,
            mode=mode,
            brokers=list(brokers),
            options=planner_options(policy=policy, allow_data_loss=allow_data_loss),
        )
    except engine.BalancerError as exc:
        raise PlanRequestInvalid(f"the planner refused: {exc}") from exc


# --- create ----------------------------------------------------------------------------------


def plan_create(
    *,
    cluster: Cluster,
    origin: str,
    mode: str,
    reassignment: dict,
    assignment_before: dict[PartitionKey, list[int]],
    report: dict,
    actor: Actor,
    brokers: Iterable[int] = (),
    trigger: str = "",
    sizes: dict[PartitionKey, int] | None = None,
    data_loss_partitions: Iterable[str] = (),
    requested_by: AbstractBaseUser | None = None,
    request_reason: str = "",
    rollback_of: Plan | None = None,
    client_address: str | None = None,
) -> Plan:
    """Store a proposal with its moves, superseding any older open proposal of the
    cluster, then apply the policy's auto-approval rules."""
    entries = reassignment.get("partitions", [])
    if not entries:
        raise PlanRequestInvalid("the plan changes nothing")
    sizes = sizes or {}
    goals_by_key = {
        (m["topic"], m["partition"]): m.get("goals", []) for m in report.get("moves", [])
    }
    moves = []
    before_of_plan: dict[PartitionKey, list[int]] = {}
    for entry in entries:
        key = (entry["topic"], entry["partition"])
        before = list(assignment_before[key])
        after = list(entry["replicas"])
        before_of_plan[key] = before
        added = [b for b in after if b not in before]
        moves.append(
            PlanMove(
                topic=key[0],
                partition=key[1],
                replicas_before=before,
                replicas_after=after,
                bytes=int(sizes.get(key, 0)) * len(added),
                goals=goals_by_key.get(key, []),
            )
        )
    rollback = {
        "version": 1,
        "partitions": [
            {"topic": t, "partition": p, "replicas": r} for (t, p), r in before_of_plan.items()
        ],
    }
    with transaction.atomic():
        plan = Plan.objects.create(
            cluster=cluster,
            origin=origin,
            mode=mode,
            brokers=sorted(set(brokers)),
            trigger=trigger,
            fingerprint=assignment_fingerprint(assignment=before_of_plan),
            reassignment={"version": 1, "partitions": entries},
            rollback_reassignment=rollback,
            report=report,
            bytes_to_move=sum(m.bytes for m in moves),
            data_loss_partitions=sorted(data_loss_partitions),
            requested_by=requested_by,
            request_reason=request_reason,
            rollback_of=rollback_of,
        )
        for move in moves:
            move.plan = plan
        PlanMove.objects.bulk_create(moves)
        audit_record(
            actor=actor,
            action="plan.proposed",
            obj=plan,
            after=_plan_summary(plan) | {"trigger": trigger, "brokers": plan.brokers},
            reason=request_reason or trigger,
            client_address=client_address,
        )
        older = Plan.objects.filter(cluster=cluster, state=PlanState.PROPOSED).exclude(pk=plan.pk)
        for old in older:
            try:
                _transition(
                    plan=old,
                    to=PlanState.SUPERSEDED,
                    actor=actor,
                    action="plan.superseded",
                    reason=f"superseded by plan #{plan.pk}",
                    fields={"superseded_by": plan},
                )
            except PlanStateError:
                pass  # decided meanwhile: nothing left to supersede
    _auto_approve(plan=plan)
    return plan


def _auto_approve(*, plan: Plan) -> bool:
    """The policy's rules; never for a plan that loses data."""
    policy = policy_get(cluster=plan.cluster)
    if plan.data_loss_partitions:
        return False
    rule = ""
    if (
        policy.auto_approve_self_healing
        and plan.origin == PlanOrigin.DETECTOR
        and plan.mode == PlanMode.FIX_OFFLINE
    ):
        rule = "auto-approval rule: self-healing of dead brokers"
    elif (
        policy.auto_approve_max_bytes is not None
        and plan.bytes_to_move < policy.auto_approve_max_bytes
        and _sizes_known(plan)
    ):
        rule = (
            f"auto-approval rule: moves {plan.bytes_to_move} bytes, "
            f"under {policy.auto_approve_max_bytes}"
        )
    if not rule:
        return False
    try:
        _transition(
            plan=plan,
            to=PlanState.APPROVED,
            actor=actor_policy(cluster_name=plan.cluster.name),
            action="plan.approved",
            reason=rule,
            fields={
                "decided_by_policy": True,
                "decided_at": timezone.now(),
                "decision_reason": rule,
            },
        )
    except PlanStateError:
        return False
    execution_enqueue(plan_id=plan.pk)
    return True


def _sizes_known(plan: Plan) -> bool:
    # A plan whose sizes are unknown (no metrics yet) counts as 0 bytes; don't trust that.
    data_moves = [m for m in plan.moves.all() if not m.leader_only]
    return not data_moves or plan.report.get("sizes_known", False)


# --- decisions -------------------------------------------------------------------------------


def plan_stale_check(*, plan: Plan, actor: Actor = DETECTOR) -> bool:
    """Mark an undecided or approved plan stale when the cluster moved on. True if stale."""
    if plan.state not in (PlanState.PROPOSED, PlanState.APPROVED):
        return plan.state == PlanState.STALE
    if plan_fingerprint_current(plan=plan) == plan.fingerprint:
        return False
    _transition(
        plan=plan,
        to=PlanState.STALE,
        actor=actor,
        action="plan.stale",
        reason="the assignment of its partitions changed since it was proposed",
    )
    return True


def plan_approve(
    *,
    plan: Plan,
    user: AbstractBaseUser,
    reason: str = "",
    confirm_data_loss: bool = False,
    client_address: str | None = None,
) -> Plan:
    _require(user, "plans.approve_plan", "approve plans")
    if plan.state != PlanState.PROPOSED:
        raise PlanStateError(f"plan #{plan.pk} is {plan.state}; only a proposed plan is approved")
    policy = policy_get(cluster=plan.cluster)
    if policy.four_eyes and plan.requested_by_id is not None and plan.requested_by_id == user.pk:
        raise PlanPermissionDenied(
            "four-eyes rule: the operator who requested this plan can't approve it"
        )
    if plan.data_loss_partitions:
        _require(user, "plans.approve_data_loss", "approve a plan that loses data")
        if not confirm_data_loss:
            raise PlanRequestInvalid(
                f"this plan heals {len(plan.data_loss_partitions)} partition(s) by giving up "
                "their data; confirm the data loss explicitly to approve it"
            )
    if plan_stale_check(plan=plan, actor=user):
        raise PlanStale(f"plan #{plan.pk} is stale: the cluster changed since it was proposed")
    _transition(
        plan=plan,
        to=PlanState.APPROVED,
        actor=user,
        action="plan.approved",
        reason=reason,
        client_address=client_address,
        fields={
            "decided_by": user,
            "decided_at": timezone.now(),
            "decision_reason": reason,
            "data_loss_confirmed_by": user if plan.data_loss_partitions else None,
        },
    )
    if plan.data_loss_partitions:
        audit_record(
            actor=user,
            action="plan.data_loss_confirmed",
            obj=plan,
            after={"partitions": plan.data_loss_partitions},
            reason=reason,
            client_address=client_address,
        )
    execution_enqueue(plan_id=plan.pk)
    return plan


def plan_reject(
    *, plan: Plan, user: AbstractBaseUser, reason: str, client_address: str | None = None
) -> Plan:
    _require(user, "plans.reject_plan", "reject plans")
    reason = (reason or "").strip()
    if not reason:
        raise PlanRequestInvalid("a rejection needs a reason")
    return _transition(
        plan=plan,
        to=PlanState.REJECTED,
        actor=user,
        action="plan.rejected",
        reason=reason,
        client_address=client_address,
        fields={"decided_by": user, "decided_at": timezone.now(), "decision_reason": reason},
    )


def plan_cancel(
    *, plan: Plan, user: AbstractBaseUser, reason: str = "", client_address: str | None = None
) -> Plan:
    """Approved: cancelled at once. Executing: the executor stops submitting, cancels
    what is in flight and removes the throttles on its next step."""
    _require(user, "plans.cancel_plan", "cancel plans")
    if plan.state == PlanState.APPROVED:
        return _transition(
            plan=plan,
            to=PlanState.CANCELLED,
            actor=user,
            action="plan.cancelled",
            reason=reason,
            client_address=client_address,
            fields={"finished_at": timezone.now()},
        )
    if plan.state != PlanState.EXECUTING:
        raise PlanStateError(f"plan #{plan.pk} is {plan.state}; there is nothing to cancel")
    with transaction.atomic():
        execution, _ = Execution.objects.get_or_create(plan=plan)
        if execution.cancel_requested:
            raise PlanStateError(f"plan #{plan.pk} is already being cancelled")
        Execution.objects.filter(pk=execution.pk).update(cancel_requested=True)
        audit_record(
            actor=user,
            action="plan.cancel_requested",
            obj=plan,
            before={"state": plan.state},
            after={"state": plan.state, "cancel_requested": True},
            reason=reason,
            client_address=client_address,
        )
    plan.refresh_from_db()
    return plan


# --- requests by hand ------------------------------------------------------------------------


def plan_request(
    *,
    cluster: Cluster,
    user: AbstractBaseUser,
    mode: str,
    brokers: Iterable[int] = (),
    reason: str = "",
    allow_data_loss: bool = False,
    client_address: str | None = None,
) -> Plan:
    """An operator asks for a plan: full rebalance, add / remove brokers, self-healing
    or leaders only. Refused with a clear message when invalid or when there is
    nothing to change."""
    _require(user, "plans.request_plan", "request plans")
    if mode not in REQUESTABLE_MODES:
        known = ", ".join(REQUESTABLE_MODES)
        raise PlanRequestInvalid(f"unknown mode {mode!r} (known: {known})")
    try:
        broker_ids = sorted({int(b) for b in brokers})
    except (TypeError, ValueError) as exc:
        raise PlanRequestInvalid("broker ids must be integers") from exc
    if allow_data_loss and mode not in (PlanMode.FIX_OFFLINE, PlanMode.FULL):
        raise PlanRequestInvalid("only self-healing or a full rebalance may allow data loss")
    known_ids = set(cluster.brokers.values_list("node_id", flat=True))
    unknown = [b for b in broker_ids if b not in known_ids]
    if unknown:
        raise PlanRequestInvalid(f"broker {unknown[0]} is not part of cluster {cluster.name}")
    policy = policy_get(cluster=cluster)
    scoped = snapshot_build(cluster=cluster, policy=policy)
    proposal = planner_run(
        scoped=scoped, policy=policy, mode=mode, brokers=broker_ids, allow_data_loss=allow_data_loss
    )
    if not proposal.plan["partitions"]:
        raise PlanRequestInvalid("nothing to change: the planner found no better assignment")
    return plan_create_from_proposal(
        cluster=cluster,
        scoped=scoped,
        proposal=proposal,
        origin=PlanOrigin.OPERATOR,
        mode=mode,
        brokers=broker_ids,
        trigger=f"requested by {user.get_username()}",
        actor=user,
        requested_by=user,
        request_reason=reason,
        client_address=client_address,
    )


def plan_create_from_proposal(
    *,
    cluster: Cluster,
    scoped: ScopedSnapshot,
    proposal: engine.Proposal,
    origin: str,
    mode: str,
    actor: Actor,
    brokers: Iterable[int] = (),
    trigger: str = "",
    requested_by: AbstractBaseUser | None = None,
    request_reason: str = "",
    client_address: str | None = None,
) -> Plan:
    before, sizes, sizes_known = {}, {}, True
    for p in scoped.snapshot["partitions"]:
        key = (p["topic"], p["partition"])
        before[key] = p["replicas"]
        if "load" in p:
            sizes[key] = int(p["load"].get("size", 0))
        else:
            sizes_known = False
    report = dict(proposal.report)
    report["sizes_known"] = sizes_known
    report["unplaceable"] = scoped.unplaceable
    return plan_create(
        cluster=cluster,
        origin=origin,
        mode=mode,
        reassignment=proposal.plan,
        assignment_before=before,
        report=report,
        actor=actor,
        brokers=brokers,
        trigger=trigger,
        sizes=sizes,
        data_loss_partitions=proposal.report.get("data_loss", {}).get("healed", []),
        requested_by=requested_by,
        request_reason=request_reason,
        client_address=client_address,
    )


def plan_rollback_request(
    *, plan: Plan, user: AbstractBaseUser, reason: str = "", client_address: str | None = None
) -> Plan:
    """A new proposal that puts a completed plan's partitions back where they started."""
    _require(user, "plans.request_plan", "request a rollback")
    if plan.state != PlanState.COMPLETED:
        raise PlanStateError(f"plan #{plan.pk} is {plan.state}; only a completed plan rolls back")
    targets = {
        (e["topic"], e["partition"]): list(e["replicas"])
        for e in plan.rollback_reassignment.get("partitions", [])
    }
    current = assignment_current(cluster=plan.cluster, keys=targets)
    missing = [f"{t}-{p}" for (t, p), r in current.items() if not r]
    if missing:
        raise PlanRequestInvalid(f"can't roll back: partition {missing[0]} no longer exists")
    alive = set(plan.cluster.brokers.filter(alive=True).values_list("node_id", flat=True))
    for key, replicas in targets.items():
        dead = [b for b in replicas if b not in alive]
        if dead:
            raise PlanRequestInvalid(
                f"can't roll back: {key[0]}-{key[1]} would go back to broker {dead[0]}, "
                "which is not alive"
            )
    entries = [
        {"topic": t, "partition": p, "replicas": r}
        for (t, p), r in targets.items()
        if current[(t, p)] != r
    ]
    if not entries:
        raise PlanRequestInvalid("nothing to roll back: the partitions are already back")
    sizes = {(m.topic, m.partition): m.bytes // max(len(m.added), 1) for m in plan.moves.all()}
    with transaction.atomic():
        rollback = plan_create(
            cluster=plan.cluster,
            origin=PlanOrigin.ROLLBACK,
            mode=PlanMode.ROLLBACK,
            reassignment={"version": 1, "partitions": entries},
            assignment_before=current,
            report={"rollback_of": plan.pk, "sizes_known": plan.report.get("sizes_known", False)},
            actor=user,
            trigger=f"rollback of plan #{plan.pk}",
            sizes=sizes,
            requested_by=user,
            request_reason=reason,
            rollback_of=plan,
            client_address=client_address,
        )
        # On the original plan too, so its own history shows it was rolled back.
        audit_record(
            actor=user,
            action="plan.rollback_requested",
            obj=plan,
            after={"rollback_plan": rollback.pk, "state": rollback.state},
            reason=reason,
            client_address=client_address,
        )
    return rollback


# --- policy ------------------------------------------------------------------------------------

POLICY_FIELDS = (
    "detection_enabled",
    "detection_interval",
    "dead_broker_grace",
    "goals",
    "balance_threshold",
    "goal_thresholds",
    "topics_include",
    "topics_exclude",
    "excluded_brokers",
    "auto_approve_self_healing",
    "auto_approve_max_bytes",
    "four_eyes",
    "throttle_bytes_per_sec",
    "max_moves_per_broker",
    "max_moves_cluster",
)


def policy_validate(*, values: dict[str, Any]) -> None:
    """Raise PlanRequestInvalid naming the first bad field."""
    goals = values.get("goals", [])
    if not isinstance(goals, list) or any(g not in engine.SOFT_GOALS for g in goals):
        raise PlanRequestInvalid(f"goals: use soft goals among {', '.join(engine.SOFT_GOALS)}")
    thresholds = values.get("goal_thresholds", {})
    if not isinstance(thresholds, dict):
        raise PlanRequestInvalid("goal_thresholds: must map goal names to numbers")
    for name, value in thresholds.items():
        if name not in engine.ALL_GOALS or not isinstance(value, int | float) or value < 1.0:
            raise PlanRequestInvalid(
                f"goal_thresholds: {name!r} needs a known goal and a value >= 1.0"
            )
    if values.get("balance_threshold", 1.1) < 1.0:
        raise PlanRequestInvalid("balance_threshold: must be >= 1.0")
    for field in ("topics_include", "topics_exclude"):
        patterns = values.get(field, [])
        if not isinstance(patterns, list) or not all(isinstance(p, str) and p for p in patterns):
            raise PlanRequestInvalid(f"{field}: must be a list of topic name patterns")
    brokers = values.get("excluded_brokers", [])
    if not isinstance(brokers, list) or not all(type(b) is int for b in brokers):
        raise PlanRequestInvalid("excluded_brokers: must be a list of broker ids")
    for field in ("max_moves_per_broker", "max_moves_cluster", "detection_interval"):
        if field in values and int(values[field]) < 1:
            raise PlanRequestInvalid(f"{field}: must be at least 1")
    if values.get("throttle_bytes_per_sec", 0) < 0:
        raise PlanRequestInvalid("throttle_bytes_per_sec: must be >= 0 (0: no throttle)")
    max_bytes = values.get("auto_approve_max_bytes")
    if max_bytes is not None and max_bytes < 0:
        raise PlanRequestInvalid("auto_approve_max_bytes: must be >= 0")


def policy_update(
    *,
    policy: ClusterPolicy,
    actor: AbstractBaseUser | SystemActor,
    changes: dict[str, Any],
    reason: str = "",
    client_address: str | None = None,
) -> ClusterPolicy:
    """Change some policy fields; audited with before/after of what changed."""
    if isinstance(actor, AbstractBaseUser):
        _require(actor, "plans.change_clusterpolicy", "change cluster policies")
    unknown = sorted(set(changes) - set(POLICY_FIELDS))
    if unknown:
        raise PlanRequestInvalid(f"unknown policy field {unknown[0]!r}")
    merged = {f: getattr(policy, f) for f in POLICY_FIELDS} | changes
    policy_validate(values=merged)
    before = {f: getattr(policy, f) for f in changes if getattr(policy, f) != changes[f]}
    if not before:
        return policy
    after = {f: changes[f] for f in before}
    with transaction.atomic():
        for field, value in after.items():
            setattr(policy, field, value)
        policy.save()
        audit_record(
            actor=actor,
            action="policy.changed",
            obj=policy,
            before=before,
            after=after,
            reason=reason,
            client_address=client_address,
        )
    return policy
