"""Finding plans and their moves: a cluster's plans (as a list, or as its page's
board), its open or running one, one a user may see, a plan's moves by filter."""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import QuerySet

from apps.clusters.models import Cluster
from apps.clusters.selectors import User
from apps.core.json_lists import json_list_has

from ..models import ACTIVE_STATES, ClusterPolicy, Plan, PlanContent, PlanMove, PlanState

# A plan's report (every move, with its reasons) and reassignments are as large as the
# plan: megabytes at 100k+ moves. They live in PlanContent, read only when used.


def plans_list(
    *, cluster: Cluster | None = None, states: Iterable[str] | None = None
) -> QuerySet[Plan]:
    plans = Plan.objects.select_related("cluster", "requested_by", "decided_by")
    if cluster is not None:
        plans = plans.filter(cluster=cluster)
    if states:
        plans = plans.filter(state__in=list(states))
    return plans.order_by("-created_at", "-id")


@dataclass(frozen=True)
class PlansBoard:
    """The cluster page's plans: the latest ones that are not superseded (a held
    proposal replaced now and then would otherwise fill the list), how many superseded
    ones that leaves out, and what the detector's last round did."""

    plans: list[Plan]
    superseded: int
    detection_outcome: str
    detection_at: datetime | None


def plans_board_get(*, cluster: Cluster, limit: int = 20) -> PlansBoard:
    plans = plans_list(cluster=cluster)
    policy = ClusterPolicy.objects.filter(cluster=cluster).first()
    return PlansBoard(
        plans=list(plans.exclude(state=PlanState.SUPERSEDED)[:limit]),
        superseded=plans.filter(state=PlanState.SUPERSEDED).count(),
        detection_outcome=policy.last_detection_outcome if policy else "",
        detection_at=policy.last_detection_at if policy else None,
    )


def plan_open_get(*, cluster: Cluster) -> Plan | None:
    """The proposal awaiting a decision, if any."""
    return (
        Plan.objects.filter(cluster=cluster, state=PlanState.PROPOSED)
        .order_by("-created_at", "-id")
        .first()
    )


def plan_running_get(*, cluster: Cluster) -> Plan | None:
    """The approved or executing plan, if any (the lifecycle allows one at a time)."""
    return (
        Plan.objects.filter(cluster=cluster, state__in=ACTIVE_STATES)
        .order_by("-created_at", "-id")
        .first()
    )


def plan_visible_get(*, user: User, plan_id: int) -> Plan | None:
    """A plan of a cluster the user may see, if the user may see plans. Its report and
    reassignments (megabytes at 100k+ moves) load only if read."""
    plan = Plan.objects.select_related("cluster").filter(pk=plan_id).first()
    if plan is None or not user.has_perm("plans.view_plan", plan):
        return None
    return plan


# The report's parts a plan page shows; its moves, one per partition, it does not.
PLAN_REPORT_SUMMARY_KEYS = (
    "balance",
    "unmet_hard_goals",
    "unplaceable",
    "unfixable",
    "data_loss",
    "rf_lowered",
)


def plan_report_keys(*, plan: Plan, keys: Iterable[str]) -> dict:
    """These top-level keys of the plan's report (absent ones left out), without the
    rest. PostgreSQL extracts them from its binary JSON; SQLite would parse the whole
    text once per key, so there the report is read once and picked from."""
    keys = tuple(keys)
    rows = PlanContent.objects.filter(plan_id=plan.pk)
    if connection.vendor == "postgresql":
        row = rows.values_list(*(f"report__{key}" for key in keys)).first() or ()
        found = dict(zip(keys, row, strict=False))
    else:
        report = rows.values_list("report", flat=True).first() or {}
        found = {key: report.get(key) for key in keys}
    return {k: v for k, v in found.items() if v is not None}


def plan_report_summary(*, plan: Plan) -> dict:
    return plan_report_keys(plan=plan, keys=PLAN_REPORT_SUMMARY_KEYS)


def plan_goals_list(*, plan: Plan) -> list[str]:
    """The goals any of the plan's moves serves, by name: stored with the plan when it
    was made (report["move_goals"]), else the distinct goal lists of its moves."""
    stored = plan_report_keys(plan=plan, keys=["move_goals"]).get("move_goals")
    if stored is not None:
        return list(stored)
    lists = PlanMove.objects.filter(plan=plan).order_by().values_list("goals", flat=True).distinct()
    return sorted({g for goals in lists for g in goals})


PLAN_MOVE_ORDERINGS = {
    "topic": ("topic", "partition"),
    "-topic": ("-topic", "-partition"),
    "bytes": ("bytes", "topic", "partition"),
    "-bytes": ("-bytes", "topic", "partition"),
    "state": ("state", "topic", "partition"),
    "-state": ("-state", "topic", "partition"),
}


def plan_moves_filter(
    *, plan: Plan, topic: str = "", broker: int | None = None, goal: str = "", ordering: str = ""
) -> QuerySet[PlanMove]:
    moves = PlanMove.objects.filter(plan=plan)
    if topic:
        moves = moves.filter(topic__icontains=topic)
    if broker is not None:
        moves = moves.filter(
            json_list_has(model=PlanMove, field="replicas_before", value=broker)
            | json_list_has(model=PlanMove, field="replicas_after", value=broker)
        )
    if goal:
        moves = moves.filter(json_list_has(model=PlanMove, field="goals", value=goal))
    return moves.order_by(*(PLAN_MOVE_ORDERINGS.get(ordering) or ("topic", "partition")))
