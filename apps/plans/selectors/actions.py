"""What a user may do to a plan now: the buttons the pages and the API offer."""

from dataclasses import dataclass

from apps.clusters.selectors import User

from ..models import ACTIVE_STATES, Execution, Plan, PlanState


@dataclass(frozen=True)
class PlanActions:
    """What this user may do to this plan now (buttons shown; the services decide)."""

    approve: bool
    reject: bool
    execute: bool
    cancel: bool
    rollback: bool
    # Control of a running plan: pause or resume, throttle and move caps.
    pause: bool = False
    resume: bool = False
    tune: bool = False


def plan_actions_get(*, user: User, plan: Plan) -> PlanActions:
    state = plan.state
    execution = Execution.objects.filter(plan=plan).first()
    controllable = (
        state in ACTIVE_STATES
        and user.has_perm("plans.cancel_plan", plan)
        and not (execution and execution.cancel_requested)
    )
    paused = bool(execution and execution.paused)
    return PlanActions(
        approve=state == PlanState.PROPOSED and user.has_perm("plans.approve_plan", plan),
        reject=state == PlanState.PROPOSED and user.has_perm("plans.reject_plan", plan),
        execute=state == PlanState.APPROVED and user.has_perm("plans.approve_plan", plan),
        cancel=state in ACTIVE_STATES and user.has_perm("plans.cancel_plan", plan),
        rollback=state == PlanState.COMPLETED and user.has_perm("plans.request_plan", plan),
        pause=controllable and not paused,
        resume=controllable and paused,
        tune=controllable,
    )
