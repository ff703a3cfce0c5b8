"""Plan services: lifecycle (propose, approve, reject, cancel, rollback, policy),
detection (the periodic balancer) and execution (the resumable executor)."""

from .detection import cluster_detect, clusters_due_for_detection
from .execution import (
    execution_run,
    execution_step,
    executions_resume,
)
from .lifecycle import (
    plan_approve,
    plan_cancel,
    plan_create,
    plan_reject,
    plan_request,
    plan_rollback_request,
    plan_stale_check,
    policy_get,
    policy_update,
)

__all__ = [
    "cluster_detect",
    "clusters_due_for_detection",
    "execution_run",
    "execution_step",
    "executions_resume",
    "plan_approve",
    "plan_cancel",
    "plan_create",
    "plan_reject",
    "plan_request",
    "plan_rollback_request",
    "plan_stale_check",
    "policy_get",
    "policy_update",
]
