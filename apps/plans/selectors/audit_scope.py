"""What a cluster's audit trail is about: the cluster, its brokers, topics, policy, plans."""

from django.db.models import QuerySet

from apps.clusters.models import Cluster

from ..models import ClusterPolicy


def cluster_audited_objects(*, cluster: Cluster) -> list[QuerySet]:
    """The rows whose audit events count as events of `cluster` (for audit_events_explore)."""
    return [
        Cluster.objects.filter(pk=cluster.pk),
        cluster.plans.all(),
        ClusterPolicy.objects.filter(cluster=cluster),
        cluster.brokers.all(),
        cluster.topics.all(),
    ]
