"""The execution lease: the database row that lets one worker at a time step a plan,
and expires when that worker dies."""

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from ..models import Execution, Plan


def lease_take(*, plan: Plan, owner: str) -> bool:
    """Take (or renew) the lease for `owner` for EXECUTOR_LEASE_SECONDS; False while
    another owner holds a live one."""
    now = timezone.now()
    until = now + timedelta(seconds=float(settings.EXECUTOR_LEASE_SECONDS))
    execution, _ = Execution.objects.get_or_create(plan=plan)
    taken = (
        Execution.objects.filter(pk=execution.pk)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now) | Q(lease_owner=owner))
        .update(lease_owner=owner, lease_until=until)
    )
    return bool(taken)


def lease_release(*, plan: Plan, owner: str) -> None:
    Execution.objects.filter(plan=plan, lease_owner=owner).update(lease_owner="", lease_until=None)
