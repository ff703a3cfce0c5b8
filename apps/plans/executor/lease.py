"""The execution lease: the database row that lets one worker at a time step a plan,
and expires when that worker dies."""

from django.conf import settings

from apps.core.leases import lease_release, lease_take

from ..models import Execution, Plan

_FIELDS = {"owner_field": "lease_owner", "until_field": "lease_until"}


def execution_lease_take(*, plan: Plan, owner: str) -> bool:
    """Take (or renew) the lease for `owner` for EXECUTOR_LEASE_SECONDS; False while
    another owner holds a live one."""
    execution, _ = Execution.objects.get_or_create(plan=plan)
    return lease_take(
        row=Execution.objects.filter(pk=execution.pk),
        owner=owner,
        seconds=float(settings.EXECUTOR_LEASE_SECONDS),
        renew=True,
        **_FIELDS,
    )


def execution_lease_release(*, plan: Plan, owner: str) -> None:
    lease_release(row=Execution.objects.filter(plan=plan), owner=owner, **_FIELDS)
