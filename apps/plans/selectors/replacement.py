"""What took the place of a plan that can no longer be decided (superseded or stale),
so its page and a refused approval can say what changed and offer the newer plan."""

from dataclasses import dataclass
from datetime import datetime

from apps.audit.selectors import audit_events_filter

from ..actions import PLAN_REPLACED
from ..models import Plan, PlanState

PLAN_OBJECT_TYPE = Plan._meta.label_lower


@dataclass(frozen=True)
class PlanReplacement:
    state: str  # superseded or stale
    at: datetime | None
    reason: str  # what changed, as the audit trail recorded it
    newer: Plan | None  # the proposal to look at instead, if any is open or replaced it


def plan_replacement_get(*, plan: Plan) -> PlanReplacement | None:
    if plan.state not in (PlanState.SUPERSEDED, PlanState.STALE):
        return None
    event = audit_events_filter(
        action=PLAN_REPLACED[plan.state], object_type=PLAN_OBJECT_TYPE, object_id=str(plan.pk)
    ).first()
    newer = plan.superseded_by
    if newer is None or newer.state != PlanState.PROPOSED:
        newer = (
            Plan.objects.filter(
                cluster_id=plan.cluster_id, state=PlanState.PROPOSED, pk__gt=plan.pk
            )
            .order_by("-pk")
            .first()
        ) or newer
    return PlanReplacement(
        state=plan.state,
        at=event.created_at if event is not None else None,
        reason=event.reason if event is not None else "",
        newer=newer,
    )
