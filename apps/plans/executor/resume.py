"""The resume sweep: re-enqueue what a killed worker left behind, so every approved
plan runs to its end and every throttle is eventually removed."""

from datetime import datetime

from django.utils import timezone

from ..models import ACTIVE_STATES, Plan
from ..queue import execution_enqueue


def executions_resume(*, now: datetime | None = None) -> list[int]:
    """Enqueue every approved / executing plan nobody holds a live lease on (a killed
    worker's), and retry throttle removal of finished plans that could not clean up."""
    now = now or timezone.now()
    ids = []
    for plan in Plan.objects.filter(state__in=ACTIVE_STATES).select_related("execution"):
        execution = getattr(plan, "execution", None)
        if execution is not None and execution.lease_until and execution.lease_until > now:
            continue
        ids.append(plan.pk)
    leftovers = Plan.objects.filter(execution__throttle_applied=True).exclude(
        state__in=ACTIVE_STATES
    )
    ids.extend(p.pk for p in leftovers)
    for plan_id in ids:
        execution_enqueue(plan_id=plan_id)
    return ids
