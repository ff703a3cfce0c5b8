"""A plan's state change: checked against PLAN_TRANSITIONS, made with a conditional
UPDATE (so two operators, or an operator and the detector, can't both win) and
recorded in the audit trail in the same transaction."""

from typing import Any

from django.db import transaction

from apps.audit.services import Actor

from ..errors import PlanStateError
from ..models import PLAN_TRANSITIONS, Plan
from .plan_audit import plan_audit_record


def plan_summarize(*, plan: Plan) -> dict[str, Any]:
    """What the audit trail records of a plan before and after a change."""
    return {
        "state": plan.state,
        "mode": plan.mode,
        "origin": plan.origin,
        "partitions": plan.partition_count,
        "bytes_to_move": plan.bytes_to_move,
        "fingerprint": plan.fingerprint,
    }


def plan_transition(
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
        before = plan_summarize(plan=plan)
        for key, value in values.items():
            setattr(plan, key, value)
        plan_audit_record(
            actor=actor,
            action=action,
            plan=plan,
            before=before,
            after=plan_summarize(plan=plan),
            reason=reason,
            client_address=client_address,
        )
    return plan
