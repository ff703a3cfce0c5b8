"""The API's own write: a refused plan decision is audited, not only refused."""

from django.contrib.auth.base_user import AbstractBaseUser

from apps.audit.services import audit_record
from apps.plans.models import Plan


def plan_action_refused_record(
    *, user: AbstractBaseUser, action: str, plan: Plan, error: str, client_address: str | None
) -> None:
    """A refused attempt (e.g. a viewer's forged approve) is recorded as plan.<action>_refused."""
    audit_record(
        actor=user,
        action=f"plan.{action}_refused",
        obj=plan,
        before={"state": plan.state},
        reason=error,
        client_address=client_address,
    )
