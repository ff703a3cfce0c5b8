"""The audit actions the plans app records: one name per thing that happens to a plan,
its execution, a cluster's policy or a drained broker. Producers and consumers
(notifications, the dashboard's filters, the API's refusals) use these names; the
strings are what the audit trail stores."""

from enum import StrEnum

from .models import PlanState


class PlanAction(StrEnum):
    PROPOSED = "plan.proposed"
    APPROVED = "plan.approved"
    SELF_APPROVED = "plan.self_approved"
    REJECTED = "plan.rejected"
    CANCELLED = "plan.cancelled"
    CANCEL_REQUESTED = "plan.cancel_requested"
    SUPERSEDED = "plan.superseded"
    STALE = "plan.stale"
    DATA_LOSS_CONFIRMED = "plan.data_loss_confirmed"
    EXECUTION_REQUESTED = "plan.execution_requested"
    ROLLBACK_REQUESTED = "plan.rollback_requested"
    # An operator's decision or request the permissions or the plan's state refused.
    APPROVE_REFUSED = "plan.approve_refused"
    REJECT_REFUSED = "plan.reject_refused"
    EXECUTE_REFUSED = "plan.execute_refused"
    CANCEL_REFUSED = "plan.cancel_refused"
    PAUSE_REFUSED = "plan.pause_refused"
    RESUME_REFUSED = "plan.resume_refused"
    TUNE_REFUSED = "plan.tune_refused"
    ROLLBACK_REFUSED = "plan.rollback_refused"
    REQUEST_REFUSED = "plan.request_refused"


class ExecutionAction(StrEnum):
    STARTED = "execution.started"
    COMPLETED = "execution.completed"
    FAILED = "execution.failed"
    CANCELLED = "execution.cancelled"
    PAUSED = "execution.paused"
    RESUMED = "execution.resumed"
    TUNED = "execution.tuned"
    BATCH_SUBMITTED = "execution.batch_submitted"
    MOVES_FAILED = "execution.moves_failed"
    LEADERS_ELECTED = "execution.leaders_elected"
    REASSIGNMENTS_CANCELLED = "execution.reassignments_cancelled"
    THROTTLE_SET = "execution.throttle_set"
    THROTTLE_CHANGED = "execution.throttle_changed"
    THROTTLE_REMOVED = "execution.throttle_removed"
    THROTTLE_ADAPTED = "execution.throttle_adapted"


class PolicyAction(StrEnum):
    CREATED = "policy.created"
    CHANGED = "policy.changed"


class BrokerAction(StrEnum):
    DRAINED = "broker.drained"
    UNDRAINED = "broker.undrained"
    DEMOTED = "broker.demoted"
    UNDEMOTED = "broker.undemoted"
    SLOW = "broker.slow"
    NOT_SLOW = "broker.not_slow"


# The action that ends an execution in each final state.
EXECUTION_ENDED: dict[str, ExecutionAction] = {
    PlanState.COMPLETED: ExecutionAction.COMPLETED,
    PlanState.FAILED: ExecutionAction.FAILED,
    PlanState.CANCELLED: ExecutionAction.CANCELLED,
}

# The action that replaced a proposal, by the state it was left in.
PLAN_REPLACED: dict[str, PlanAction] = {
    PlanState.SUPERSEDED: PlanAction.SUPERSEDED,
    PlanState.STALE: PlanAction.STALE,
}

# A refused operator action (the API's verb) and what the audit trail calls it.
PLAN_REFUSED: dict[str, PlanAction] = {
    "approve": PlanAction.APPROVE_REFUSED,
    "reject": PlanAction.REJECT_REFUSED,
    "execute": PlanAction.EXECUTE_REFUSED,
    "cancel": PlanAction.CANCEL_REFUSED,
    "pause": PlanAction.PAUSE_REFUSED,
    "resume": PlanAction.RESUME_REFUSED,
    "tune": PlanAction.TUNE_REFUSED,
    "rollback": PlanAction.ROLLBACK_REFUSED,
}
