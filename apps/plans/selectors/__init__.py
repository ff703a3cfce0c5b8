"""Reads of the plans app, one module per concept; import them from here."""

from .actions import PlanActions, plan_actions_get
from .audit_scope import audit_plan_clusters, cluster_audited_objects
from .counts import plans_count_by_origin, plans_count_by_state
from .demotions import DemotedBroker, demoted_broker_ids, demoted_brokers_list
from .drains import DrainedBroker, drained_broker_ids, drained_brokers_list
from .estimate import PlanEstimateCheck, plan_estimate_check
from .exports import plan_export_json, plan_rollback_export_json
from .fingerprint import (
    PartitionKey,
    assignment_current,
    assignment_fingerprint,
    plan_fingerprint_current,
    plan_keys,
)
from .health import ClusterHealth, cluster_health_get, cluster_health_list
from .lists import (
    PLAN_MOVE_ORDERINGS,
    PlansBoard,
    plan_goals_list,
    plan_moves_filter,
    plan_open_get,
    plan_report_summary,
    plan_running_get,
    plan_visible_get,
    plans_board_get,
    plans_list,
)
from .loads import (
    LoadsBeforeAfter,
    loads_before_after,
    plan_loads_before_after,
    snapshot_with_assignment,
)
from .progress import PlanProgress, plan_eta_at_throttle, plan_progress
from .proposal_basis import basis_changes, proposal_basis
from .replacement import PlanReplacement, plan_replacement_get
from .replication import under_replicated_outside_moves
from .shortfalls import (
    PlanShortfalls,
    UnmetHardGoal,
    UnplacedPartition,
    plan_shortfalls_get,
)
from .slow_brokers import slow_brokers_get
from .snapshot import ScopedSnapshot, policy_or_default, snapshot_build, topic_in_scope
from .stamp import cluster_plans_stamp
from .throttle_trace import ThrottlePoint, plan_throttle_trace

__all__ = [
    "plans_count_by_origin",
    "plans_count_by_state",
    "PLAN_MOVE_ORDERINGS",
    "ClusterHealth",
    "DemotedBroker",
    "DrainedBroker",
    "PlanEstimateCheck",
    "LoadsBeforeAfter",
    "PartitionKey",
    "PlanActions",
    "PlanProgress",
    "PlanReplacement",
    "PlanShortfalls",
    "PlansBoard",
    "ScopedSnapshot",
    "UnmetHardGoal",
    "UnplacedPartition",
    "assignment_current",
    "assignment_fingerprint",
    "audit_plan_clusters",
    "basis_changes",
    "cluster_audited_objects",
    "cluster_health_get",
    "cluster_plans_stamp",
    "demoted_broker_ids",
    "demoted_brokers_list",
    "drained_broker_ids",
    "slow_brokers_get",
    "under_replicated_outside_moves",
    "ThrottlePoint",
    "plan_throttle_trace",
    "drained_brokers_list",
    "cluster_health_list",
    "loads_before_after",
    "plan_actions_get",
    "plan_estimate_check",
    "plan_eta_at_throttle",
    "plan_export_json",
    "plan_fingerprint_current",
    "plan_goals_list",
    "plan_keys",
    "plan_loads_before_after",
    "plan_moves_filter",
    "plan_open_get",
    "plan_progress",
    "plan_replacement_get",
    "plan_report_summary",
    "plan_rollback_export_json",
    "plan_shortfalls_get",
    "plan_running_get",
    "plan_visible_get",
    "plans_board_get",
    "plans_list",
    "policy_or_default",
    "proposal_basis",
    "snapshot_build",
    "snapshot_with_assignment",
    "topic_in_scope",
]
