"""Read-side queries behind the dashboard pages, its websockets and the REST API."""

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import CharField, Q, QuerySet, Sum
from django.db.models.functions import Cast

from apps.audit.models import AuditEvent
from apps.audit.selectors import audit_events_filter
from apps.balancer import engine
from apps.balancer.engine.model import MEASURE_NAMES, ClusterModel
from apps.balancer.engine.modes import setup_mode
from apps.clusters.models import Broker, Cluster, Partition, Topic
from apps.metrics.models import BrokerLoad, PartitionLoad
from apps.plans import selectors as plans_selectors
from apps.plans.models import ACTIVE_STATES, ClusterPolicy, Plan, PlanMove, PlanState
from apps.plans.selectors import PlanProgress

User = AbstractBaseUser | AnonymousUser

# Seeing a cluster (its pages, websockets and API) takes this permission, which the
# viewer / operator / approver / admin groups all grant. It is global: every role
# sees every cluster; this is the one place to narrow that to per-cluster grants.
VIEW_CLUSTER_PERMISSION = "clusters.view_cluster"

HEATMAP_METRICS = {
    # metric: (label, unit)
    "replicas": ("Replicas", "replicas"),
    "leaders": ("Leaders", "leaders"),
    "network_in": ("Bytes in (replication included)", "B/s"),
    "network_out": ("Bytes out (leaders, replication included)", "B/s"),
}


def clusters_visible_list(*, user: User) -> QuerySet[Cluster]:
    """The clusters this user may see, by name."""
    if not user_may_see_clusters(user=user):
        return Cluster.objects.none()
    return Cluster.objects.order_by("name")


def user_may_see_clusters(*, user: User) -> bool:
    return bool(user.is_authenticated and user.is_active and user.has_perm(VIEW_CLUSTER_PERMISSION))


def cluster_visible_get(*, user: User, name: str) -> Cluster | None:
    """The named cluster, or None when it does not exist or the user may not see it."""
    return clusters_visible_list(user=user).filter(name=name).first()


def cluster_visible_get_by_id(*, user: User, cluster_id: int) -> Cluster | None:
    return clusters_visible_list(user=user).filter(pk=cluster_id).first()


def _balance_ratio(values: list[float]) -> float | None:
    # As the planner reports it (BALANCING.md §4): the busiest broker over the mean.
    total = sum(values)
    if not values or total <= 0:
        return None
    return max(values) / (total / len(values))


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
    alive_ids = set(cluster.brokers.filter(alive=True).values_list("node_id", flat=True))
    brokers_total = cluster.brokers.count()
    replicas: Counter[int] = Counter()
    leaders: Counter[int] = Counter()
    partitions = offline = under_replicated = 0
    for leader, replica_list, is_offline, is_urp in Partition.objects.filter(
        topic__cluster=cluster
    ).values_list("leader", "replicas", "offline", "under_replicated"):
        partitions += 1
        offline += is_offline
        under_replicated += is_urp
        replicas.update(replica_list)
        if leader is not None:
            leaders[leader] += 1
    alive = sorted(alive_ids)
    balance: dict[str, float | None] = {
        "replicas": _balance_ratio([replicas[b] for b in alive]),
        "leaders": _balance_ratio([leaders[b] for b in alive]),
    }
    loads = broker_loads_latest(cluster=cluster)
    for resource in ("network_in", "network_out", "disk"):
        balance[resource] = (
            _balance_ratio([loads[b][resource] for b in alive if b in loads]) if loads else None
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
        running_progress=plans_selectors.plan_progress(plan=running) if running else None,
    )


def cluster_health_list(*, user: User) -> list[ClusterHealth]:
    return [cluster_health_get(cluster=c) for c in clusters_visible_list(user=user)]


# --- traffic -------------------------------------------------------------------


def broker_loads_latest(*, cluster: Cluster) -> dict[int, dict[str, float]]:
    """Per broker, the loads of the newest complete window; empty without metrics."""
    latest = BrokerLoad.objects.filter(cluster=cluster).order_by("-window_start").first()
    if latest is None:
        return {}
    rows = BrokerLoad.objects.filter(cluster=cluster, window_start=latest.window_start)
    return {
        r.broker_id: {
            "network_in": r.network_in,
            "network_out": r.network_out,
            "disk": float(r.disk),
        }
        for r in rows
    }


def _partition_traffic_latest(*, cluster: Cluster) -> dict[tuple[str, int], dict[str, float]]:
    latest = PartitionLoad.objects.filter(cluster=cluster).order_by("-window_start").first()
    if latest is None:
        return {}
    rows = PartitionLoad.objects.filter(
        cluster=cluster, window_start=latest.window_start
    ).values_list("topic", "partition", "bytes_in", "bytes_out", "messages_in")
    return {
        (t, p): {"bytes_in": bi or 0.0, "bytes_out": bo or 0.0, "messages_in": mi or 0.0}
        for t, p, bi, bo, mi in rows
    }


# --- heatmap -------------------------------------------------------------------


@dataclass(frozen=True)
class Heatmap:
    metric: str
    label: str
    unit: str
    brokers: list[int]
    broker_alive: list[bool]
    topics: list[str]
    # z[topic][broker], in the order of `topics` and `brokers`.
    z: list[list[float]]
    # Where traffic came from: the window end (ISO), or "" for counts / no metrics.
    window_end: str = ""


def heatmap_get(
    *, cluster: Cluster, metric: str = "replicas", include_internal: bool = True
) -> Heatmap:
    """Brokers x topics. Counts come from the model; traffic from the newest load window,
    spread as the planner's load model does (BALANCING.md §3): bytes in on every replica,
    bytes out plus replication on the leader."""
    if metric not in HEATMAP_METRICS:
        raise ValueError(f"unknown metric {metric!r}; one of {', '.join(HEATMAP_METRICS)}")
    brokers = list(cluster.brokers.order_by("node_id").values_list("node_id", "alive"))
    broker_ids = [b for b, _ in brokers]
    column = {b: i for i, b in enumerate(broker_ids)}
    topics_qs = cluster.topics.order_by("name")
    if not include_internal:
        topics_qs = topics_qs.filter(internal=False)
    topics = list(topics_qs.values_list("name", flat=True))
    row = {t: i for i, t in enumerate(topics)}
    z = [[0.0] * len(broker_ids) for _ in topics]

    traffic = {}
    window_end = ""
    if metric in ("network_in", "network_out"):
        traffic = _partition_traffic_latest(cluster=cluster)
        window_end = _latest_window_end(cluster=cluster) if traffic else ""

    partitions = Partition.objects.filter(topic__cluster=cluster, topic__name__in=topics)
    for topic, index, leader, replica_list in partitions.values_list(
        "topic__name", "index", "leader", "replicas"
    ):
        cells = z[row[topic]]
        if metric == "replicas":
            for b in replica_list:
                if b in column:
                    cells[column[b]] += 1
        elif metric == "leaders":
            if leader in column:
                cells[column[leader]] += 1
        else:
            load = traffic.get((topic, index))
            if load is None:
                continue
            if metric == "network_in":
                for b in replica_list:
                    if b in column:
                        cells[column[b]] += load["bytes_in"]
            elif leader in column:
                followers = max(len(replica_list) - 1, 0)
                cells[column[leader]] += load["bytes_out"] + load["bytes_in"] * followers
    label, unit = HEATMAP_METRICS[metric]
    return Heatmap(
        metric=metric,
        label=label,
        unit=unit,
        brokers=broker_ids,
        broker_alive=[a for _, a in brokers],
        topics=topics,
        z=z,
        window_end=window_end,
    )


def _latest_window_end(*, cluster: Cluster) -> str:
    latest = PartitionLoad.objects.filter(cluster=cluster).order_by("-window_start").first()
    return latest.window_end.isoformat() if latest else ""


def partitions_filter(
    *, cluster: Cluster, topic: str = "", broker: int | None = None
) -> QuerySet[Partition]:
    """Partitions of a cluster, optionally of one topic and / or with a replica on a broker."""
    partitions = Partition.objects.filter(topic__cluster=cluster).select_related("topic")
    if topic:
        partitions = partitions.filter(topic__name=topic)
    if broker is not None:
        # JSON containment is not portable to SQLite; filter the (small) candidate set here.
        ids = [
            pk
            for pk, replica_list in partitions.values_list("pk", "replicas")
            if broker in replica_list
        ]
        partitions = partitions.filter(pk__in=ids)
    return partitions.order_by("topic__name", "index")


# --- plans ---------------------------------------------------------------------


def plan_open_get(*, cluster: Cluster) -> Plan | None:
    """The proposal awaiting a decision, if any."""
    return plans_selectors.plan_open_get(cluster=cluster)


def plan_running_get(*, cluster: Cluster) -> Plan | None:
    """The approved or executing plan, if any (the lifecycle allows one at a time)."""
    return (
        Plan.objects.filter(cluster=cluster, state__in=ACTIVE_STATES)
        .order_by("-created_at", "-id")
        .first()
    )


# --- traffic charts ----------------------------------------------------------------

TRAFFIC_WINDOWS_MAX = 360


@dataclass(frozen=True)
class BrokerTraffic:
    """One series per broker over the kept windows (oldest first)."""

    windows: list[str]  # window ends, ISO
    # broker id -> measure -> values aligned with `windows` (None: not measured).
    series: dict[int, dict[str, list[float | None]]]


def broker_traffic_series(*, cluster: Cluster, windows: int = 60) -> BrokerTraffic:
    """Bytes in / out per broker (load model, replication included) from BrokerLoad, and
    messages in per broker as leader from PartitionLoad, over the newest `windows`."""
    windows = max(1, min(windows, TRAFFIC_WINDOWS_MAX))
    starts = list(
        BrokerLoad.objects.filter(cluster=cluster)
        .order_by("-window_start")
        .values_list("window_start", flat=True)
        .distinct()[:windows]
    )
    starts.reverse()
    if not starts:
        return BrokerTraffic(windows=[], series={})
    position = {s: i for i, s in enumerate(starts)}
    ends: list[str] = [""] * len(starts)
    series: dict[int, dict[str, list[float | None]]] = {}

    def slot(broker: int) -> dict[str, list[float | None]]:
        if broker not in series:
            series[broker] = {
                m: [None] * len(starts) for m in ("network_in", "network_out", "messages_in")
            }
        return series[broker]

    for row in BrokerLoad.objects.filter(cluster=cluster, window_start__in=starts).values(
        "broker_id", "window_start", "window_end", "network_in", "network_out"
    ):
        i = position[row["window_start"]]
        ends[i] = row["window_end"].isoformat()
        s = slot(row["broker_id"])
        s["network_in"][i] = row["network_in"]
        s["network_out"][i] = row["network_out"]
    messages = (
        PartitionLoad.objects.filter(cluster=cluster, window_start__in=starts, leader__isnull=False)
        .values("window_start", "leader")
        .annotate(total=Sum("messages_in"))
    )
    for row in messages:
        slot(row["leader"])["messages_in"][position[row["window_start"]]] = row["total"] or 0.0
    return BrokerTraffic(windows=ends, series=dict(sorted(series.items())))


def loads_broker_filter(
    *, cluster: Cluster, since: datetime | None = None, until: datetime | None = None
) -> QuerySet[BrokerLoad]:
    """Broker loads, newest window first."""
    loads = BrokerLoad.objects.filter(cluster=cluster)
    if since is not None:
        loads = loads.filter(window_start__gte=since)
    if until is not None:
        loads = loads.filter(window_start__lt=until)
    return loads.order_by("-window_start", "broker_id")


def loads_partition_filter(
    *,
    cluster: Cluster,
    since: datetime | None = None,
    until: datetime | None = None,
    topic: str = "",
) -> QuerySet[PartitionLoad]:
    """Partition loads, newest window first."""
    loads = PartitionLoad.objects.filter(cluster=cluster)
    if since is not None:
        loads = loads.filter(window_start__gte=since)
    if until is not None:
        loads = loads.filter(window_start__lt=until)
    if topic:
        loads = loads.filter(topic=topic)
    return loads.order_by("-window_start", "topic", "partition")


# --- per-broker loads of an assignment (plan page, what-if) --------------------------


def broker_loads_of(*, snapshot: dict[str, Any]) -> dict[int, dict[str, float]]:
    """Per-broker measures of a planner snapshot by the planner's own load model
    (BALANCING.md §3: bytes in on every replica, bytes out and replication on the
    leader, replicas[0]), so bars and the planner's figures always agree."""
    snap = engine.parse_snapshot(snapshot)
    setup = setup_mode(snap, "leaders")  # the mode that constrains nothing we read
    model = ClusterModel(snap, setup, capacity_threshold=1.0, max_replicas_per_broker=10**9)
    return {
        int(snap.broker_ids[i]): dict(zip(MEASURE_NAMES, model.load[i].tolist(), strict=True))
        for i in range(snap.n_brokers)
    }


def snapshot_with_assignment(
    *, snapshot: dict[str, Any], replicas: dict[tuple[str, int], list[int]]
) -> dict[str, Any]:
    """A copy of `snapshot` with some partitions' replica lists replaced."""
    partitions = []
    for p in snapshot["partitions"]:
        target = replicas.get((p["topic"], p["partition"]))
        if target is not None:
            p = {**p, "replicas": list(target), "leader": target[0]}
        partitions.append(p)
    return {**snapshot, "partitions": partitions}


@dataclass(frozen=True)
class LoadsBeforeAfter:
    brokers: list[int]
    # measure -> values aligned with `brokers`
    before: dict[str, list[float]]
    after: dict[str, list[float]]


def loads_before_after(
    *,
    snapshot: dict[str, Any],
    before: dict[tuple[str, int], list[int]],
    after: dict[tuple[str, int], list[int]],
) -> LoadsBeforeAfter:
    loads_before = broker_loads_of(
        snapshot=snapshot_with_assignment(snapshot=snapshot, replicas=before)
    )
    loads_after = broker_loads_of(
        snapshot=snapshot_with_assignment(snapshot=snapshot, replicas=after)
    )
    brokers = sorted(loads_before)
    return LoadsBeforeAfter(
        brokers=brokers,
        before={m: [loads_before[b][m] for b in brokers] for m in MEASURE_NAMES},
        after={m: [loads_after[b][m] for b in brokers] for m in MEASURE_NAMES},
    )


def plan_loads_before_after(*, plan: Plan) -> LoadsBeforeAfter | None:
    """Per-broker loads with the plan's partitions as before and as after the plan, the
    rest as synced now. None when the cluster has nothing the planner can model."""
    policy = ClusterPolicy.objects.filter(cluster=plan.cluster).first() or ClusterPolicy(
        cluster=plan.cluster
    )
    snapshot = plans_selectors.snapshot_build(cluster=plan.cluster, policy=policy).snapshot
    if not snapshot["partitions"]:
        return None
    moves = list(plan.moves.values_list("topic", "partition", "replicas_before", "replicas_after"))
    try:
        return loads_before_after(
            snapshot=snapshot,
            before={(t, p): b for t, p, b, _ in moves},
            after={(t, p): a for t, p, _, a in moves},
        )
    except engine.BalancerError:
        # e.g. a plan naming a broker the cluster no longer has: show no bars.
        return None


def plan_visible_get(*, user: User, plan_id: int) -> Plan | None:
    """A plan of a cluster the user may see, if the user may see plans."""
    if not user_may_see_clusters(user=user) or not user.has_perm("plans.view_plan"):
        return None
    return Plan.objects.select_related("cluster").filter(pk=plan_id).first()


@dataclass(frozen=True)
class PlanActions:
    """What this user may do to this plan now (buttons shown; the services decide)."""

    approve: bool
    reject: bool
    execute: bool
    cancel: bool
    rollback: bool


def plan_actions_get(*, user: User, plan: Plan) -> PlanActions:
    state = plan.state
    return PlanActions(
        approve=state == PlanState.PROPOSED and user.has_perm("plans.approve_plan"),
        reject=state == PlanState.PROPOSED and user.has_perm("plans.reject_plan"),
        execute=state == PlanState.APPROVED and user.has_perm("plans.approve_plan"),
        cancel=state in ACTIVE_STATES and user.has_perm("plans.cancel_plan"),
        rollback=state == PlanState.COMPLETED and user.has_perm("plans.request_plan"),
    )


def plan_moves_filter(
    *, plan: Plan, topic: str = "", broker: int | None = None, goal: str = "", ordering: str = ""
) -> QuerySet[PlanMove]:
    moves = PlanMove.objects.filter(plan=plan)
    if topic:
        moves = moves.filter(topic__icontains=topic)
    if broker is not None or goal:
        # JSON lists: filter in Python over this plan's moves (at most a few thousand).
        ids = [
            pk
            for pk, before, after, goals in moves.values_list(
                "pk", "replicas_before", "replicas_after", "goals"
            )
            if (broker is None or broker in before or broker in after)
            and (not goal or goal in goals)
        ]
        moves = moves.filter(pk__in=ids)
    return moves.order_by(*(PLAN_MOVE_ORDERINGS.get(ordering) or ("topic", "partition")))


PLAN_MOVE_ORDERINGS = {
    "topic": ("topic", "partition"),
    "-topic": ("-topic", "-partition"),
    "bytes": ("bytes", "topic", "partition"),
    "-bytes": ("-bytes", "topic", "partition"),
    "state": ("state", "topic", "partition"),
    "-state": ("-state", "topic", "partition"),
}


def plan_eta_at_throttle(*, plan: Plan) -> float | None:
    """Seconds to copy the plan's bytes at the cluster's replication throttle (0: none)."""
    policy = ClusterPolicy.objects.filter(cluster=plan.cluster).first() or ClusterPolicy(
        cluster=plan.cluster
    )
    throttle = policy.throttle_bytes_per_sec
    if not throttle:
        return None
    return plan.bytes_to_move / throttle


# --- audit explorer ------------------------------------------------------------------


# What the trail records (the lifecycle, the executor, sign-ins, policy), offered as
# suggestions in the explorer's action filter; the filter takes any prefix.
AUDIT_ACTIONS = (
    "plan.",
    "plan.proposed",
    "plan.approved",
    "plan.rejected",
    "plan.cancelled",
    "plan.superseded",
    "plan.stale",
    "plan.approve_refused",
    "execution.",
    "execution.started",
    "execution.completed",
    "execution.failed",
    "policy.changed",
    "auth.",
)


def _ids_as_text(queryset: QuerySet) -> QuerySet:
    return queryset.annotate(text_id=Cast("pk", CharField())).values("text_id")


def audit_events_explore(*, cluster: Cluster | None = None, **filters: Any) -> QuerySet[AuditEvent]:
    """The audit filters (actor, action prefix, object, time) plus a cluster: events
    about the cluster itself, its brokers and topics, its policy and its plans."""
    events = audit_events_filter(**filters)
    if cluster is None:
        return events
    about = (
        Q(object_type=Cluster._meta.label_lower, object_id=str(cluster.pk))
        | Q(object_type=Plan._meta.label_lower, object_id__in=_ids_as_text(cluster.plans.all()))
        | Q(
            object_type=ClusterPolicy._meta.label_lower,
            object_id__in=_ids_as_text(ClusterPolicy.objects.filter(cluster=cluster)),
        )
        | Q(object_type=Broker._meta.label_lower, object_id__in=_ids_as_text(cluster.brokers.all()))
        | Q(object_type=Topic._meta.label_lower, object_id__in=_ids_as_text(cluster.topics.all()))
    )
    return events.filter(about)
