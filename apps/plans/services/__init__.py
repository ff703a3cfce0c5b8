"""The plans app's services, one concept per module; import them from here.

Plans: `creation` (a proposal stored as a plan), `operator_requests` (an operator asks
for one), `detection` (the periodic balancer asks for one), `decisions` (approve,
reject, cancel, stale), `execution_start` (an operator re-enqueues an approved plan),
`execution_control` (pause, resume, throttle and caps of a running plan),
`rollback`, `drains` (drained brokers), `drain_fit` (the metrics topic in a drain),
`transitions` (the audited state change they all use), `planner` (the
bridge to the engine), `policy`.
Shared with the executor (`apps.plans.executor`): `actors` (the system actors in the
audit trail), `permissions`, `estimate`, `sizes`.
"""

from .creation import plan_create, plan_create_from_proposal
from .decisions import plan_approve, plan_auto_approve, plan_cancel, plan_reject, plan_stale_check
from .demotions import broker_undemote, brokers_demoted_record
from .detection import (
    cluster_detect,
    cluster_recheck,
    clusters_due_for_detection,
    dead_broker_recheck_schedule,
)
from .drains import broker_undrain, brokers_drained_record
from .execution_control import execution_pause, execution_resume, execution_tune
from .execution_start import plan_execution_start
from .operator_requests import REQUESTABLE_MODES, plan_request
from .planner import planner_options, planner_run
from .policy import POLICY_FIELDS, policy_get, policy_update, policy_validate
from .rollback import plan_rollback_request
from .slow_brokers import broker_slowness_report

__all__ = [
    "broker_slowness_report",
    "broker_undrain",
    "broker_undemote",
    "brokers_demoted_record",
    "brokers_drained_record",
    "POLICY_FIELDS",
    "REQUESTABLE_MODES",
    "cluster_detect",
    "cluster_recheck",
    "clusters_due_for_detection",
    "dead_broker_recheck_schedule",
    "execution_pause",
    "execution_resume",
    "execution_tune",
    "plan_approve",
    "plan_auto_approve",
    "plan_cancel",
    "plan_create",
    "plan_create_from_proposal",
    "plan_execution_start",
    "plan_reject",
    "plan_request",
    "plan_rollback_request",
    "plan_stale_check",
    "planner_options",
    "planner_run",
    "policy_get",
    "policy_update",
    "policy_validate",
]
