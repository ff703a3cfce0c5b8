"""A fingerprint of what a cluster's page shows of its plans, so an answer built for
one cluster state (metrics.selectors.stamped_answer_get) is shared only while its
plans are as they were."""

from apps.clusters.models import Cluster

from ..models import ACTIVE_STATES, Execution, Plan


def cluster_plans_stamp(*, cluster: Cluster, latest: int = 20) -> str:
    """The latest plans' ids and states and, while one runs, when its execution last
    recorded progress. Two short queries, no report or reassignment read."""
    plans = list(
        Plan.objects.filter(cluster=cluster)
        .order_by("-created_at", "-id")
        .values_list("pk", "state")[:latest]
    )
    running = list(
        Execution.objects.filter(plan__cluster=cluster, plan__state__in=ACTIVE_STATES)
        .order_by("plan_id")
        .values_list("plan_id", "updated_at")
    )
    return repr((plans, running))
