"""A plan's throttle over time, from its audit trail: set, retuned by an operator or
the adaptive throttle, removed."""

from dataclasses import dataclass
from datetime import datetime

from apps.audit.models import AuditEvent

from ..actions import ExecutionAction
from ..models import Plan

# The actions that change the rate, and where each keeps it.
_RATE_ACTIONS = (
    ExecutionAction.THROTTLE_SET,
    ExecutionAction.THROTTLE_CHANGED,
    ExecutionAction.THROTTLE_ADAPTED,
    ExecutionAction.THROTTLE_REMOVED,
)


@dataclass(frozen=True)
class ThrottlePoint:
    at: datetime
    # bytes/s in effect from `at` on; 0: no throttle
    rate: int
    action: str
    reason: str


def _rate(event: AuditEvent) -> int | None:
    after = event.after if isinstance(event.after, dict) else {}
    if event.action == ExecutionAction.THROTTLE_REMOVED:
        return 0
    for key in ("rate", "throttle_rate"):
        if isinstance(after.get(key), int):
            return after[key]
    return None


def plan_throttle_trace(*, plan: Plan) -> list[ThrottlePoint]:
    """Each change of the plan's replication throttle, oldest first."""
    events = AuditEvent.objects.filter(
        object_type=Plan._meta.label_lower, object_id=str(plan.pk), action__in=_RATE_ACTIONS
    ).order_by("created_at", "id")
    points = []
    for e in events:
        rate = _rate(e)
        if rate is not None:
            points.append(
                ThrottlePoint(at=e.created_at, rate=rate, action=e.action, reason=e.reason)
            )
    return points
