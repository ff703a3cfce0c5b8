"""What a cluster's audit trail is about (the cluster, its brokers, topics, policy,
plans), and which plan an audit event names, so the trail can link to it."""

from django.db.models import QuerySet

from apps.clusters.models import Cluster

from ..models import ClusterPolicy, Plan

PLAN_OBJECT_TYPE = Plan._meta.label_lower  # "plans.plan"


def cluster_audited_objects(*, cluster: Cluster) -> list[QuerySet]:
    """The rows whose audit events count as events of `cluster` (for audit_events_explore)."""
    return [
        Cluster.objects.filter(pk=cluster.pk),
        cluster.plans.all(),
        ClusterPolicy.objects.filter(cluster=cluster),
        cluster.brokers.all(),
        cluster.topics.all(),
    ]


def audit_plan_clusters(*, events) -> dict[str, str]:
    """{object_id: cluster name} of the plans these audit events are about (one query)."""
    ids = {e.object_id for e in events if e.object_type == PLAN_OBJECT_TYPE}
    ids = [int(i) for i in ids if i.isdigit()]
    return {
        str(pk): name
        for pk, name in Plan.objects.filter(pk__in=ids).values_list("pk", "cluster__name")
    }
