"""Drained brokers: a completed remove-brokers plan marks its brokers drained, so no
later plan fills them again; an operator undrains them. Both are audited on the
broker."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from apps.audit.services import Actor, audit_record
from apps.clusters.models import Cluster

from ..actions import BrokerAction
from ..errors import PlanRequestInvalid
from ..models import BrokerDrain, Plan, PlanMode, PlanState
from .permissions import permission_require


def brokers_drained_record(*, plan: Plan, actor: Actor) -> list[BrokerDrain]:
    """Mark the brokers of a completed remove-brokers plan drained (call it in the
    transaction that completes the plan). Who drained them: whoever requested the
    plan, else whoever approved it. A broker already drained keeps its first record."""
    if plan.mode != PlanMode.REMOVE_BROKERS or plan.state != PlanState.COMPLETED:
        return []
    by = plan.requested_by or plan.decided_by
    now = timezone.now()
    known = set(
        BrokerDrain.objects.filter(cluster_id=plan.cluster_id).values_list("node_id", flat=True)
    )
    brokers = {b.node_id: b for b in plan.cluster.brokers.filter(node_id__in=plan.brokers)}
    made = []
    for node_id in plan.brokers:
        if node_id in known:
            continue
        made.append(
            BrokerDrain.objects.create(
                cluster_id=plan.cluster_id,
                node_id=node_id,
                drained_at=now,
                drained_by=by,
                plan=plan,
            )
        )
        audit_record(
            actor=actor,
            action=BrokerAction.DRAINED,
            obj=brokers.get(node_id),
            object_type="" if node_id in brokers else "clusters.broker",
            object_repr="" if node_id in brokers else f"{plan.cluster.name}/broker-{node_id}",
            cluster_id=plan.cluster_id,
            after={
                "node_id": node_id,
                "plan": plan.pk,
                "drained_by": by.get_username() if by is not None else None,
            },
            reason=f"plan #{plan.pk} (remove brokers) completed",
        )
    return made


def drains_rolled_back(*, plan: Plan, actor: Actor) -> list[int]:
    """A completed rollback of a drain put replicas back on the drained brokers: they
    are drained no more (call it in the transaction that completes the rollback).
    Returns the node ids undrained."""
    if plan.mode != PlanMode.ROLLBACK or plan.state != PlanState.COMPLETED:
        return []
    if plan.rollback_of_id is None:
        return []
    drains = list(
        BrokerDrain.objects.filter(cluster_id=plan.cluster_id, plan_id=plan.rollback_of_id)
    )
    brokers = {
        b.node_id: b for b in plan.cluster.brokers.filter(node_id__in=[d.node_id for d in drains])
    }
    by = plan.requested_by.get_username() if plan.requested_by is not None else "unknown"
    for drain in drains:
        drain.delete()
        audit_record(
            actor=actor,
            action=BrokerAction.UNDRAINED,
            obj=brokers.get(drain.node_id),
            object_type="" if drain.node_id in brokers else "clusters.broker",
            object_repr=""
            if drain.node_id in brokers
            else f"{plan.cluster.name}/broker-{drain.node_id}",
            cluster_id=plan.cluster_id,
            before={"node_id": drain.node_id, "plan": plan.rollback_of_id},
            after={"node_id": drain.node_id, "drained": False},
            reason=f"rollback plan #{plan.pk} (requested by {by}) of drain plan "
            f"#{plan.rollback_of_id} completed",
        )
    return [d.node_id for d in drains]


def broker_undrain(
    *,
    cluster: Cluster,
    node_id: int,
    user: AbstractBaseUser,
    reason: str = "",
    client_address: str | None = None,
) -> None:
    """Make a drained broker ordinary again: plans may place replicas on it and the
    periodic balancer fills it like a new broker. Needs the permission to request
    plans (the one a drain needs)."""
    permission_require(
        user=user, perm="plans.request_plan", what="undrain brokers", cluster=cluster
    )
    if type(node_id) is not int:
        raise PlanRequestInvalid("the broker id must be an integer")
    with transaction.atomic():
        # Only the drain row is locked: PostgreSQL refuses FOR UPDATE on the nullable
        # side of the join to its user.
        drain = (
            BrokerDrain.objects.select_for_update(of=("self",))
            .select_related("drained_by")
            .filter(cluster=cluster, node_id=node_id)
            .first()
        )
        if drain is None:
            raise PlanRequestInvalid(f"broker {node_id} of {cluster.name} is not drained")
        broker = cluster.brokers.filter(node_id=node_id).first()
        before = {
            "node_id": node_id,
            "drained_at": drain.drained_at.isoformat(),
            "drained_by": drain.drained_by.get_username() if drain.drained_by else None,
            "plan": drain.plan_id,
        }
        drain.delete()
        audit_record(
            actor=user,
            action=BrokerAction.UNDRAINED,
            obj=broker,
            object_type="" if broker is not None else "clusters.broker",
            object_repr="" if broker is not None else f"{cluster.name}/broker-{node_id}",
            cluster_id=cluster.pk,
            before=before,
            after={"node_id": node_id, "drained": False},
            reason=reason,
            client_address=client_address,
        )
