"""Drained brokers of a cluster: what the cluster page shows and what the planner's
snapshot leaves out; with the brokers a drain is under way on, the brokers leaving."""

from dataclasses import dataclass
from datetime import datetime

from apps.clusters.models import Cluster

from ..models import ACTIVE_STATES, BrokerDrain, Plan, PlanMode


@dataclass(frozen=True)
class DrainedBroker:
    node_id: int
    drained_at: datetime
    # Username of whoever requested (else approved) the drain; "" if unknown.
    drained_by: str
    plan_id: int | None
    # Replicas it holds now (synced model): 0 while it stays drained.
    replicas: int


def drained_broker_ids(*, cluster: Cluster) -> set[int]:
    return set(BrokerDrain.objects.filter(cluster=cluster).values_list("node_id", flat=True))


def brokers_leaving(*, cluster: Cluster) -> set[int]:
    """Drained brokers, and those an approved or executing remove-brokers plan drains."""
    draining = Plan.objects.filter(
        cluster=cluster, mode=PlanMode.REMOVE_BROKERS, state__in=ACTIVE_STATES
    ).values_list("brokers", flat=True)
    return drained_broker_ids(cluster=cluster) | {b for ids in draining for b in ids or []}


def drained_brokers_list(*, cluster: Cluster) -> list[DrainedBroker]:
    drains = list(BrokerDrain.objects.filter(cluster=cluster).select_related("drained_by"))
    if not drains:
        return []
    held = {
        b.node_id: b.replicas_count
        for b in cluster.brokers.filter(node_id__in=[d.node_id for d in drains])
    }
    return [
        DrainedBroker(
            node_id=d.node_id,
            drained_at=d.drained_at,
            drained_by=d.drained_by.get_username() if d.drained_by is not None else "",
            plan_id=d.plan_id,
            replicas=held.get(d.node_id, 0) or 0,
        )
        for d in drains
    ]
