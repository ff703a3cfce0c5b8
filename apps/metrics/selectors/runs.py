"""Aggregation runs (the Spark jobs that write load windows), newest first."""

from django.db.models import QuerySet

from apps.clusters.models import Cluster

from ..models import AggregationRun


def aggregation_runs_recent(*, cluster: Cluster, limit: int = 20) -> QuerySet[AggregationRun]:
    return AggregationRun.objects.filter(cluster=cluster).order_by("-started_at")[:limit]
