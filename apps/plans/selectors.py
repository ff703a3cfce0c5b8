"""Read-side of plans: the planner snapshot of a cluster, fingerprints, exports,
progress, and the lists the pages show."""

import fnmatch
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from apps.clusters.models import Cluster, Partition
from apps.metrics.selectors import cluster_snapshot_build

from .models import ClusterPolicy, MoveState, Plan, PlanMove, PlanState

PartitionKey = tuple[str, int]


# --- Scope: which topics and brokers the balancer manages -------------------------------


def topic_in_scope(*, policy: ClusterPolicy, topic: str) -> bool:
    include = policy.topics_include or []
    if include and not any(fnmatch.fnmatchcase(topic, pattern) for pattern in include):
        return False
    return not any(fnmatch.fnmatchcase(topic, pattern) for pattern in policy.topics_exclude or [])


# --- Snapshot (BALANCING.md §1) -----------------------------------------------------------


@dataclass(frozen=True)
class ScopedSnapshot:
    """A planner snapshot of what the policy lets the balancer touch."""

    snapshot: dict[str, Any]
    # Left out because no plan can place them (more replicas than usable brokers).
    unplaceable: list[str]


def snapshot_build(*, cluster: Cluster, policy: ClusterPolicy) -> ScopedSnapshot:
    """The metrics app's snapshot (synced placement + latest loads), cut to the policy's scope.

    Left out: topics out of scope, excluded brokers and every partition with a
    replica on one, and partitions with more replicas than alive brokers (e.g. RF 3
    with one of three brokers down): the planner refuses a snapshot containing
    them, and nothing could heal them anyway.
    """
    full = cluster_snapshot_build(cluster=cluster)
    excluded = set(policy.excluded_brokers or [])
    brokers = [b for b in full["brokers"] if b["id"] not in excluded]
    alive = sum(1 for b in brokers if b["alive"])
    partitions, unplaceable = [], []
    for p in full["partitions"]:
        if not p["replicas"] or not topic_in_scope(policy=policy, topic=p["topic"]):
            continue
        if excluded & set(p["replicas"]):
            continue
        if len(p["replicas"]) > alive:
            unplaceable.append(f"{p['topic']}-{p['partition']}")
            continue
        partitions.append(p)
    snapshot = {**full, "brokers": brokers, "partitions": partitions}
    return ScopedSnapshot(snapshot=snapshot, unplaceable=unplaceable)


# --- Fingerprint and exports ---------------------------------------------------------------


def assignment_fingerprint(*, assignment: dict[PartitionKey, list[int]]) -> str:
    """sha256 over the ordered replica lists, independent of dict order."""
    canonical = [[t, p, list(r)] for (t, p), r in sorted(assignment.items())]
    return hashlib.sha256(json.dumps(canonical, separators=(",", ":")).encode()).hexdigest()


def assignment_current(
    *, cluster: Cluster, keys: Iterable[PartitionKey]
) -> dict[PartitionKey, list[int]]:
    """Replica lists in the synced model; a partition that disappeared maps to []."""
    keys = list(keys)
    topics = {t for t, _ in keys}
    found = {
        (name, index): list(replicas)
        for name, index, replicas in Partition.objects.filter(
            topic__cluster=cluster, topic__name__in=topics
        ).values_list("topic__name", "index", "replicas")
    }
    return {key: found.get(key, []) for key in keys}


def plan_keys(*, plan: Plan) -> list[PartitionKey]:
    return [(e["topic"], e["partition"]) for e in plan.reassignment.get("partitions", [])]


def plan_fingerprint_current(*, plan: Plan) -> str:
    """The fingerprint the plan would have if proposed now, from the synced model."""
    return assignment_fingerprint(
        assignment=assignment_current(cluster=plan.cluster, keys=plan_keys(plan=plan))
    )


def plan_export_json(*, plan: Plan) -> str:
    """Exactly what kafka-reassign-partitions.sh --execute accepts."""
    return json.dumps(plan.reassignment, indent=2) + "\n"


def plan_rollback_export_json(*, plan: Plan) -> str:
    """The reassignment that puts every partition of the plan back where it started."""
    return json.dumps(plan.rollback_reassignment, indent=2) + "\n"


# --- Lists and progress -----------------------------------------------------------------------


def plans_list(
    *, cluster: Cluster | None = None, states: Iterable[str] | None = None
) -> QuerySet[Plan]:
    plans = Plan.objects.select_related("cluster", "requested_by", "decided_by")
    if cluster is not None:
        plans = plans.filter(cluster=cluster)
    if states:
        plans = plans.filter(state__in=list(states))
    return plans.order_by("-created_at", "-id")


def plan_open_get(*, cluster: Cluster) -> Plan | None:
    return (
        Plan.objects.filter(cluster=cluster, state=PlanState.PROPOSED)
        .order_by("-created_at", "-id")
        .first()
    )


@dataclass(frozen=True)
class PlanProgress:
    moves_total: int
    moves_by_state: dict[str, int]
    bytes_total: int
    bytes_done: int
    eta_seconds: float | None
    rate_bytes_per_sec: float | None
    batches: int
    cancel_requested: bool
    leaders_elected: bool
    throttle_applied: bool

    @property
    def percent(self) -> float:
        if self.bytes_total:
            return 100.0 * self.bytes_done / self.bytes_total
        done = self.moves_by_state.get(MoveState.DONE, 0)
        return 100.0 * done / self.moves_total if self.moves_total else 100.0


def plan_progress(*, plan: Plan) -> PlanProgress:
    counts: dict[str, int] = {}
    bytes_total = bytes_done = 0
    for move in PlanMove.objects.filter(plan=plan).only("state", "bytes", "bytes_done"):
        counts[move.state] = counts.get(move.state, 0) + 1
        bytes_total += move.bytes
        bytes_done += move.bytes if move.state == MoveState.DONE else move.bytes_done
    execution = getattr(plan, "execution", None)
    return PlanProgress(
        moves_total=sum(counts.values()),
        moves_by_state=counts,
        bytes_total=bytes_total,
        bytes_done=min(bytes_done, bytes_total),
        eta_seconds=execution.eta_seconds if execution else None,
        rate_bytes_per_sec=execution.rate_bytes_per_sec if execution else None,
        batches=execution.batches if execution else 0,
        cancel_requested=execution.cancel_requested if execution else False,
        leaders_elected=execution.leaders_elected if execution else False,
        throttle_applied=execution.throttle_applied if execution else False,
    )
