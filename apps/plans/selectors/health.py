"""A cluster at a glance: state, balance and its plans (the overview page and the API).

It lives in the plans app, the domain app that may read clusters, metrics and plans.
"""

from dataclasses import dataclass, field

from django.db.models import Sum

from apps.balancer import engine
from apps.clusters.models import Cluster
from apps.clusters.selectors import User, clusters_visible_list
from apps.metrics.selectors import broker_loads_latest

from ..models import Plan
from .lists import plan_open_get, plan_running_get
from .progress import PlanProgress, plan_progress


@dataclass(frozen=True)
class ClusterHealth:
    cluster: Cluster
    brokers_alive: int
    brokers_total: int
    topics: int
    partitions: int
    offline: int
    under_replicated: int
    # resource -> max / mean over alive brokers; None when nothing to balance.
    balance: dict[str, float | None] = field(default_factory=dict)
    open_plan: Plan | None = None
    running_plan: Plan | None = None
    running_progress: PlanProgress | None = None

    @property
    def healthy(self) -> bool:
        return (
            self.cluster.reachable
            and self.brokers_alive == self.brokers_total
            and not self.offline
            and not self.under_replicated
        )


def cluster_health_get(*, cluster: Cluster) -> ClusterHealth:
    # Replicas and leaders as the sync counted them (reading every partition here is
    # slow on a large cluster), in one query with the brokers' state.
    replicas, leaders, alive_ids = {}, {}, set()
    for node_id, is_alive, n_replicas, n_leaders in cluster.brokers.values_list(
        "node_id", "alive", "replicas_count", "leaders_count"
    ):
        replicas[node_id], leaders[node_id] = n_replicas, n_leaders
        if is_alive:
            alive_ids.add(node_id)
    brokers_total = len(replicas)
    counts = cluster.topics.aggregate(
        partitions=Sum("partitions_count"),
        offline=Sum("offline_count"),
        under_replicated=Sum("under_replicated_count"),
    )
    partitions, offline = counts["partitions"] or 0, counts["offline"] or 0
    under_replicated = counts["under_replicated"] or 0
    alive = sorted(alive_ids)
    # Counts are of the current leaders, loads as measured: the engine's ratio over them.
    balance: dict[str, float | None] = {
        "replicas": engine.balance_ratio([replicas[b] for b in alive]),
        "leaders": engine.balance_ratio([leaders[b] for b in alive]),
    }
    loads = {
        row.broker_id: row
        for row in broker_loads_latest(cluster=cluster).only(
            "broker_id", "network_in", "network_out", "disk"
        )
    }
    for resource in ("network_in", "network_out", "disk"):
        balance[resource] = (
            engine.balance_ratio([float(getattr(loads[b], resource)) for b in alive if b in loads])
            if loads
            else None
        )
    running = plan_running_get(cluster=cluster)
    return ClusterHealth(
        cluster=cluster,
        brokers_alive=len(alive_ids),
        brokers_total=brokers_total,
        topics=cluster.topics.count(),
        partitions=partitions,
        offline=offline,
        under_replicated=under_replicated,
        balance=balance,
        open_plan=plan_open_get(cluster=cluster),
        running_plan=running,
        running_progress=plan_progress(plan=running) if running else None,
    )


def cluster_health_list(*, user: User) -> list[ClusterHealth]:
    return [cluster_health_get(cluster=c) for c in clusters_visible_list(user=user)]
