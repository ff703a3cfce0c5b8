"""Demoted brokers: a completed demote plan marks its brokers demoted, so no later plan
gives them leadership back; an operator undemotes them. Both are audited on the
broker."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from apps.audit.services import Actor, audit_record
from apps.clusters.models import Cluster

from ..actions import BrokerAction
from ..errors import PlanRequestInvalid
from ..models import BrokerDemotion, Plan, PlanMode, PlanState
from .permissions import permission_require


def brokers_demoted_record(*, plan: Plan, actor: Actor) -> list[BrokerDemotion]:
    """Mark the brokers of a completed demote plan demoted (call it in the transaction
    that completes the plan). Who demoted them: whoever requested the plan, else
    whoever approved it. A broker already demoted keeps its first record."""
    if plan.mode != PlanMode.DEMOTE or plan.state != PlanState.COMPLETED:
        return []
    by = plan.requested_by or plan.decided_by
    now = timezone.now()
    known = set(
        BrokerDemotion.objects.filter(cluster_id=plan.cluster_id).values_list("node_id", flat=True)
    )
    brokers = {b.node_id: b for b in plan.cluster.brokers.filter(node_id__in=plan.brokers)}
    made = []
    for node_id in plan.brokers:
        if node_id in known:
            continue
        made.append(
            BrokerDemotion.objects.create(
                cluster_id=plan.cluster_id,
                node_id=node_id,
                demoted_at=now,
                demoted_by=by,
                plan=plan,
            )
        )
        audit_record(
            actor=actor,
            action=BrokerAction.DEMOTED,
            obj=brokers.get(node_id),
            object_type="" if node_id in brokers else "clusters.broker",
            object_repr="" if node_id in brokers else f"{plan.cluster.name}/broker-{node_id}",
            cluster_id=plan.cluster_id,
            after={
                "node_id": node_id,
                "plan": plan.pk,
                "demoted_by": by.get_username() if by is not None else None,
            },
            reason=f"plan #{plan.pk} (demote) completed",
        )
    return made


def broker_undemote(
    *,
    cluster: Cluster,
    node_id: int,
    user: AbstractBaseUser,
    reason: str = "",
    client_address: str | None = None,
) -> None:
    """Let a demoted broker lead again: the next plans may give it leadership (the
    periodic balancer's, when leadership is out of balance). Needs the permission to
    request plans (the one a demotion needs)."""
    permission_require(
        user=user, perm="plans.request_plan", what="undemote brokers", cluster=cluster
    )
    if type(node_id) is not int:
        raise PlanRequestInvalid("the broker id must be an integer")
    with transaction.atomic():
        demotion = (
            BrokerDemotion.objects.select_for_update(of=("self",))
            .select_related("demoted_by")
            .filter(cluster=cluster, node_id=node_id)
            .first()
        )
        if demotion is None:
            raise PlanRequestInvalid(f"broker {node_id} of {cluster.name} is not demoted")
        broker = cluster.brokers.filter(node_id=node_id).first()
        before = {
            "node_id": node_id,
            "demoted_at": demotion.demoted_at.isoformat(),
            "demoted_by": demotion.demoted_by.get_username() if demotion.demoted_by else None,
            "plan": demotion.plan_id,
        }
        demotion.delete()
        audit_record(
            actor=user,
            action=BrokerAction.UNDEMOTED,
            obj=broker,
            object_type="" if broker is not None else "clusters.broker",
            object_repr="" if broker is not None else f"{cluster.name}/broker-{node_id}",
            cluster_id=cluster.pk,
            before=before,
            after={"node_id": node_id, "demoted": False},
            reason=reason,
            client_address=client_address,
        )
