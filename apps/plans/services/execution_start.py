"""An operator asks the executor to (re)start an approved plan, e.g. when its queued
task was lost: checked, audited, and enqueued once more."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from apps.audit.services import audit_record

from ..errors import PlanPermissionDenied, PlanStateError
from ..models import Plan, PlanState
from ..queue import execution_enqueue


def plan_execution_start(
    *, plan: Plan, user: AbstractBaseUser, client_address: str | None = None
) -> Plan:
    """Approval already enqueues the execution; this only enqueues it again. The executor
    holds a lease per plan, so a duplicate run is harmless."""
    if not (user.is_authenticated and user.has_perm("plans.approve_plan")):
        raise PlanPermissionDenied("you are not allowed to start executions")
    if plan.state not in (PlanState.APPROVED, PlanState.EXECUTING):
        raise PlanStateError(f"plan #{plan.pk} is {plan.state}; only an approved plan executes")
    with transaction.atomic():
        audit_record(
            actor=user,
            action="plan.execution_requested",
            obj=plan,
            before={"state": plan.state},
            client_address=client_address,
        )
        execution_enqueue(plan_id=plan.pk)
    return plan
