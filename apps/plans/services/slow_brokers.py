"""Slow brokers: the canary reports a broker slow through no load of its own, or fast
again; the flag is what the periodic balancer proposes a demotion for. Audited on the
broker."""

from django.db import transaction
from django.utils import timezone

from apps.audit.services import actor_system, audit_record
from apps.clusters.models import Cluster

from ..actions import BrokerAction
from ..models import SlowBroker
from ..queue import recheck_schedule

CANARY = actor_system(name="canary")


def broker_slowness_report(*, cluster: Cluster, node_id: int, slow: bool, reason: str) -> bool:
    """Flag a broker slow (`reason` says how) or clear its flag; on a new flag, ask for
    a detection round at once. True when the flag changed."""
    with transaction.atomic():
        row = SlowBroker.objects.select_for_update().filter(cluster=cluster, node_id=node_id)
        found = row.first()
        if slow == (found is not None):
            return False
        broker = cluster.brokers.filter(node_id=node_id).first()
        if slow:
            SlowBroker.objects.create(
                cluster=cluster, node_id=node_id, flagged_at=timezone.now(), reason=reason[:300]
            )
            recheck_schedule(cluster_id=cluster.pk, at=timezone.now())
        else:
            found.delete()
        audit_record(
            actor=CANARY,
            action=BrokerAction.SLOW if slow else BrokerAction.NOT_SLOW,
            obj=broker,
            object_type="" if broker is not None else "clusters.broker",
            object_repr="" if broker is not None else f"{cluster.name}/broker-{node_id}",
            cluster_id=cluster.pk,
            after={"node_id": node_id, "slow": slow},
            reason=reason,
        )
    return True
