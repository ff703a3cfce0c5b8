"""A plan's estimate beside what its execution really copied and took."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Sum

from ..models import MoveState, Plan, PlanState


@dataclass(frozen=True)
class PlanEstimateCheck:
    bytes_estimate: int
    estimated_at: datetime | None
    duration_estimate: float | None
    # Why there is no duration (the writes outpace the throttle), else empty.
    note: str
    # Known once the plan completed: bytes copied (the progress bar's count), start to finish.
    bytes_copied: int | None
    duration_actual: float | None

    @property
    def bytes_error_percent(self) -> float | None:
        return _error_percent(self.bytes_estimate, self.bytes_copied)

    @property
    def duration_error_percent(self) -> float | None:
        return _error_percent(self.duration_estimate, self.duration_actual)


def plan_estimate_check(*, plan: Plan) -> PlanEstimateCheck:
    copied = duration = None
    if plan.state == PlanState.COMPLETED:
        # The progress bar's own count: the same figure on the whole page.
        copied = plan.moves.filter(state=MoveState.DONE).aggregate(n=Sum("bytes_done"))["n"]
        if plan.started_at and plan.finished_at:
            duration = (plan.finished_at - plan.started_at).total_seconds()
    return PlanEstimateCheck(
        bytes_estimate=plan.bytes_to_move,
        estimated_at=plan.bytes_estimated_at,
        duration_estimate=plan.duration_estimate_seconds,
        note=plan.estimate_note,
        bytes_copied=copied,
        duration_actual=duration,
    )


def _error_percent(estimate: float | None, actual: float | None) -> float | None:
    """How far the estimate was off, in % of what really happened (+: over)."""
    if estimate is None or not actual:
        return None
    return 100.0 * (estimate - actual) / actual
