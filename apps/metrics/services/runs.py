"""Aggregation runs as a per-cluster lock: the one running run row of a cluster.

A partial unique constraint allows one run with status running per cluster, so
creating that row is taking the lock (see docs/metrics.md, Runs).
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.clusters.models import Cluster

from ..models import AggregationRun


class AggregationAlreadyRunning(Exception):
    """Another aggregation of this cluster is still running."""


def aggregation_run_start(*, cluster: Cluster, spark_master: str = "") -> AggregationRun:
    """Take the per-cluster lock by creating the one running run row.

    A run that has been running longer than METRICS_AGGREGATION_TIMEOUT is
    taken for dead (its worker crashed) and marked failed first.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=settings.METRICS_AGGREGATION_TIMEOUT)
    AggregationRun.objects.filter(
        cluster=cluster, status=AggregationRun.Status.RUNNING, started_at__lt=stale
    ).update(status=AggregationRun.Status.FAILED, finished_at=now, error="abandoned: timed out")
    try:
        with transaction.atomic():
            return AggregationRun.objects.create(
                cluster=cluster, started_at=now, spark_master=spark_master
            )
    except IntegrityError:
        raise AggregationAlreadyRunning(
            f"an aggregation of cluster {cluster.name} is already running"
        ) from None
