"""Decisions on a plan: approved (by an operator, or at once by the policy's rules),
rejected, cancelled, or found stale because the cluster moved on. An approval
enqueues the execution."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from apps.audit.services import Actor, actor_policy
from apps.core.bounds import THROTTLE_BYTES_PER_SEC_MAX

from ..actions import ExecutionAction, PlanAction
from ..errors import (
    PlanPermissionDenied,
    PlanReplaced,
    PlanRequestInvalid,
    PlanStale,
    PlanStateError,
)
from ..models import Execution, Plan, PlanMode, PlanOrigin, PlanState
from ..queue import execution_enqueue
from ..selectors import plan_fingerprint_current, plan_replacement_get
from .actors import DETECTOR
from .permissions import permission_require
from .plan_audit import plan_audit_record
from .policy import policy_get
from .transitions import plan_transition


def plan_stale_check(*, plan: Plan, actor: Actor = DETECTOR) -> bool:
    """Mark an undecided or approved plan stale when the cluster moved on. True if stale."""
    if plan.state not in (PlanState.PROPOSED, PlanState.APPROVED):
        return plan.state == PlanState.STALE
    if plan_fingerprint_current(plan=plan) == plan.fingerprint:
        return False
    plan_transition(
        plan=plan,
        to=PlanState.STALE,
        actor=actor,
        action=PlanAction.STALE,
        reason="the assignment of its partitions changed since it was proposed",
    )
    return True


def plan_approve(
    *,
    plan: Plan,
    user: AbstractBaseUser,
    reason: str = "",
    confirm_data_loss: bool = False,
    throttle_rate: int | None = None,
    client_address: str | None = None,
) -> Plan:
    """Approve and enqueue the execution; `throttle_rate` (bytes/s, 0: none) replaces
    the policy's throttle for this run."""
    permission_require(
        user=user, perm="plans.approve_plan", what="approve plans", cluster=plan.cluster
    )
    if throttle_rate is not None and not 0 <= throttle_rate <= THROTTLE_BYTES_PER_SEC_MAX:
        raise PlanRequestInvalid(
            f"the throttle is a number of bytes per second, 0 to {THROTTLE_BYTES_PER_SEC_MAX}"
        )
    if plan.state != PlanState.PROPOSED:
        _replaced_refuse(plan=plan)
        raise PlanStateError(f"plan #{plan.pk} is {plan.state}; only a proposed plan is approved")
    policy = policy_get(cluster=plan.cluster)
    if policy.four_eyes and plan.requested_by_id is not None and plan.requested_by_id == user.pk:
        raise PlanPermissionDenied(
            "four-eyes rule: the operator who requested this plan can't approve it"
        )
    if plan.data_loss_partitions:
        permission_require(
            user=user,
            perm="plans.approve_data_loss",
            what="approve a plan that loses data",
            cluster=plan.cluster,
        )
        if not confirm_data_loss:
            raise PlanRequestInvalid(
                f"this plan heals {len(plan.data_loss_partitions)} partition(s) by giving up "
                "their data; confirm the data loss explicitly to approve it"
            )
    if plan_stale_check(plan=plan, actor=user):
        raise PlanStale(f"plan #{plan.pk} is stale: the cluster changed since it was proposed")
    # The estimate is made again from the logs when the executor starts (not here: the
    # read takes seconds on a slow cluster, and the request would wait for it).
    with transaction.atomic():
        plan_transition(
            plan=plan,
            to=PlanState.APPROVED,
            actor=user,
            action=PlanAction.APPROVED,
            reason=reason,
            client_address=client_address,
            fields={
                "decided_by": user,
                "decided_at": timezone.now(),
                "decision_reason": reason,
                "data_loss_confirmed_by": user if plan.data_loss_partitions else None,
            },
        )
        if plan.requested_by_id is not None and plan.requested_by_id == user.pk:
            # Only with four-eyes off for the cluster: the trail and the page say so.
            plan_audit_record(
                actor=user,
                action=PlanAction.SELF_APPROVED,
                plan=plan,
                reason="four-eyes is off for this cluster",
                client_address=client_address,
            )
        if throttle_rate is not None:
            Execution.objects.update_or_create(
                plan=plan,
                defaults={"throttle_rate": throttle_rate, "approved_throttle_rate": throttle_rate},
            )
            plan_audit_record(
                actor=user,
                action=ExecutionAction.TUNED,
                plan=plan,
                before={"throttle_rate": None},
                after={"throttle_rate": throttle_rate},
                reason="throttle chosen at approval",
                client_address=client_address,
            )
    if plan.data_loss_partitions:
        plan_audit_record(
            actor=user,
            action=PlanAction.DATA_LOSS_CONFIRMED,
            plan=plan,
            after={"partitions": plan.data_loss_partitions},
            reason=reason,
            client_address=client_address,
        )
    execution_enqueue(plan_id=plan.pk)
    return plan


def _replaced_refuse(*, plan: Plan) -> None:
    """Refuse a decision on a superseded or stale plan by saying what changed and
    which proposal to review instead."""
    replaced = plan_replacement_get(plan=plan)
    if replaced is None:
        return
    newer = replaced.newer
    message = f"plan #{plan.pk} is {plan.state}"
    if replaced.reason:
        message += f" ({replaced.reason})"
    message += f"; review plan #{newer.pk} instead" if newer else "; no newer proposal is open"
    raise PlanReplaced(message, newer_plan_id=newer.pk if newer is not None else None)


def plan_auto_approve(*, plan: Plan) -> bool:
    """Approve a new plan if the cluster policy's rules allow it; never a plan that
    loses data. True if approved (and its execution enqueued)."""
    policy = policy_get(cluster=plan.cluster)
    if plan.data_loss_partitions:
        return False
    rule = ""
    healing = plan.origin == PlanOrigin.DETECTOR and policy.auto_approve_self_healing
    if healing and plan.mode == PlanMode.FIX_OFFLINE:
        rule = "auto-approval rule: self-healing of dead brokers"
    elif healing and plan.mode == PlanMode.DEMOTE:
        rule = "auto-approval rule: self-healing of slow brokers"
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
        plan_transition(
            plan=plan,
            to=PlanState.APPROVED,
            actor=actor_policy(cluster_name=plan.cluster.name),
            action=PlanAction.APPROVED,
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


def plan_reject(
    *, plan: Plan, user: AbstractBaseUser, reason: str, client_address: str | None = None
) -> Plan:
    permission_require(
        user=user, perm="plans.reject_plan", what="reject plans", cluster=plan.cluster
    )
    reason = (reason or "").strip()
    if not reason:
        raise PlanRequestInvalid("a rejection needs a reason")
    return plan_transition(
        plan=plan,
        to=PlanState.REJECTED,
        actor=user,
        action=PlanAction.REJECTED,
        reason=reason,
        client_address=client_address,
        fields={"decided_by": user, "decided_at": timezone.now(), "decision_reason": reason},
    )


def plan_cancel(
    *, plan: Plan, user: AbstractBaseUser, reason: str = "", client_address: str | None = None
) -> Plan:
    """Approved: cancelled at once. Executing: the executor stops submitting, cancels
    what is in flight and removes the throttles on its next step."""
    permission_require(
        user=user, perm="plans.cancel_plan", what="cancel plans", cluster=plan.cluster
    )
    if plan.state == PlanState.APPROVED:
        return plan_transition(
            plan=plan,
            to=PlanState.CANCELLED,
            actor=user,
            action=PlanAction.CANCELLED,
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
        plan_audit_record(
            actor=user,
            action=PlanAction.CANCEL_REQUESTED,
            plan=plan,
            before={"state": plan.state},
            after={"state": plan.state, "cancel_requested": True},
            reason=reason,
            client_address=client_address,
        )
    plan.refresh_from_db()
    return plan
