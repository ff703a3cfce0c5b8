"""Errors the plan services raise; each message is meant for the operator."""


class PlanServiceError(Exception):
    """Base: the request was refused and nothing was changed."""

    status_code = 400


class PlanPermissionDenied(PlanServiceError):
    status_code = 403


class PlanStateError(PlanServiceError):
    """The plan is not in a state that allows this (e.g. approving a rejected plan)."""

    status_code = 409


class PlanStale(PlanStateError):
    """The cluster no longer matches the assignment the plan started from."""


class PlanReplaced(PlanStateError):
    """The plan was superseded or went stale; `newer_plan_id` is the proposal to
    review instead, if there is one."""

    def __init__(self, message: str, *, newer_plan_id: int | None) -> None:
        super().__init__(message)
        self.newer_plan_id = newer_plan_id


class PlanRequestInvalid(PlanServiceError):
    """A malformed or impossible request (unknown mode or broker, planner refusal)."""
