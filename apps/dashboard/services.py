"""Dashboard services: what the pages and the API do beyond the lifecycle's own
services (which they call for every decision, never re-implementing it)."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from apps.audit.services import audit_record
from apps.plans.errors import PlanPermissionDenied, PlanStateError
from apps.plans.models import Plan, PlanState


def plan_execution_start(
    *, plan: Plan, user: AbstractBaseUser, client_address: str | None = None
) -> Plan:
    """(Re)start the executor on an approved plan, e.g. when its queued task was lost.

    Approval already enqueues the execution; this only enqueues it again. The executor
    holds a lease per plan, so a duplicate run is harmless."""
    from apps.plans.tasks import plan_execute_task  # tasks import services: import late

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
        plan_id = plan.pk
        transaction.on_commit(lambda: plan_execute_task.delay(plan_id))
    return plan
