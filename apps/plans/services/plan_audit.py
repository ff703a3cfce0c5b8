"""What happens to a plan, recorded: one audit row, and `plan_changed` for the apps that
follow plans (live pages, notifications)."""

from typing import Any

from apps.audit.models import AuditEvent
from apps.audit.services import Actor, audit_record

from ..models import Plan
from ..signals import plan_changed


def plan_audit_record(
    *,
    plan: Plan,
    actor: Actor,
    action: str,
    before: Any = None,
    after: Any = None,
    reason: str = "",
    client_address: str | None = None,
) -> AuditEvent:
    """Audit `action` on `plan`, then tell the receivers of `plan_changed`. Call it inside
    the transaction that makes the change: receivers defer their outside work to its
    commit, and a receiver's error never fails the change (send_robust)."""
    event = audit_record(
        actor=actor,
        action=action,
        obj=plan,
        before=before,
        after=after,
        reason=reason,
        client_address=client_address,
    )
    plan_changed.send_robust(sender=Plan, plan=plan, action=action, audit_event=event)
    return event
