"""An operator asks the executor to (re)start an approved plan, e.g. when its queued
task was lost: checked, audited, and enqueued once more."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from ..actions import PlanAction
from ..errors import PlanPermissionDenied, PlanStateError
from ..models import Plan, PlanState
from ..queue import execution_enqueue
from .plan_audit import plan_audit_record


def plan_execution_start(
    *, plan: Plan, user: AbstractBaseUser, client_address: str | None = None
) -> Plan:
    """Approval already enqueues the execution; this only enqueues it again. The executor
    holds a lease per plan, so a duplicate run is harmless."""
    if not (user.is_authenticated and user.has_perm("plans.approve_plan", plan)):
        raise PlanPermissionDenied("you are not allowed to start executions")
    if plan.state not in (PlanState.APPROVED, PlanState.EXECUTING):
        raise PlanStateError(f"plan #{plan.pk} is {plan.state}; only an approved plan executes")
    with transaction.atomic():
        plan_audit_record(
            actor=user,
            action=PlanAction.EXECUTION_REQUESTED,
            plan=plan,
            before={"state": plan.state},
            client_address=client_address,
        )
        execution_enqueue(plan_id=plan.pk)
    return plan
