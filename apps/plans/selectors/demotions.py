"""Demoted brokers of a cluster: what the cluster page shows and what every plan keeps
leadership off."""

from dataclasses import dataclass
from datetime import datetime

from apps.clusters.models import Cluster

from ..models import ACTIVE_STATES, BrokerDemotion, Plan, PlanMode


@dataclass(frozen=True)
class DemotedBroker:
    node_id: int
    demoted_at: datetime
    # Username of whoever requested (else approved) the demotion; "" if unknown.
    demoted_by: str
    plan_id: int | None
    # Partitions it leads now (synced model): 0 while it stays demoted, but for
    # partitions no other replica of which is in sync.
    leaders: int


def demoted_broker_ids(*, cluster: Cluster) -> set[int]:
    """Demoted brokers, and those an approved or executing demote plan demotes."""
    demoting = Plan.objects.filter(
        cluster=cluster, mode=PlanMode.DEMOTE, state__in=ACTIVE_STATES
    ).values_list("brokers", flat=True)
    held = BrokerDemotion.objects.filter(cluster=cluster).values_list("node_id", flat=True)
    return set(held) | {b for ids in demoting for b in ids or []}


def demoted_brokers_list(*, cluster: Cluster) -> list[DemotedBroker]:
    demotions = list(BrokerDemotion.objects.filter(cluster=cluster).select_related("demoted_by"))
    if not demotions:
        return []
    led = {
        b.node_id: b.leaders_count
        for b in cluster.brokers.filter(node_id__in=[d.node_id for d in demotions])
    }
    return [
        DemotedBroker(
            node_id=d.node_id,
            demoted_at=d.demoted_at,
            demoted_by=d.demoted_by.get_username() if d.demoted_by is not None else "",
            plan_id=d.plan_id,
            leaders=led.get(d.node_id, 0) or 0,
        )
        for d in demotions
    ]
