"""The API's own write: a refused plan decision or request is audited, not only refused."""

from django.contrib.auth.base_user import AbstractBaseUser

from apps.audit.services import audit_record
from apps.clusters.models import Cluster
from apps.plans.actions import PLAN_REFUSED, PlanAction
from apps.plans.models import Plan


def plan_action_refused_record(
    *, user: AbstractBaseUser, action: str, plan: Plan, error: str, client_address: str | None
) -> None:
    """A refused attempt (e.g. a viewer's forged approve) is recorded as plan.<action>_refused."""
    audit_record(
        actor=user,
        action=PLAN_REFUSED[action],
        obj=plan,
        before={"state": plan.state},
        reason=error,
        client_address=client_address,
    )


def plan_request_refused_record(
    *,
    user: AbstractBaseUser,
    cluster: Cluster,
    mode: str,
    brokers: list[int],
    error: str,
    client_address: str | None,
) -> None:
    """A refused request for a plan (e.g. a viewer's forged POST), against its cluster."""
    audit_record(
        actor=user,
        action=PlanAction.REQUEST_REFUSED,
        obj=cluster,
        after={"mode": mode, "brokers": brokers},
        reason=error,
        client_address=client_address,
    )
