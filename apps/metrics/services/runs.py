"""Aggregation runs as a per-cluster lock: the one running run row of a cluster.

A partial unique constraint allows one run with status running per cluster, so
creating that row is taking the lock, and ending the run releases it (see
docs/metrics.md, Runs).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.clusters.models import Cluster

from ..models import AggregationRun

logger = logging.getLogger(__name__)

# What a run measured, set on the instance by the storage service.
_RUN_FIGURES = (
    "input_rows",
    "output_rows",
    "broker_rows",
    "malformed_rows",
    "late_rows",
    "windows",
)


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


def aggregation_run_finish(
    *, run: AggregationRun, status: AggregationRun.Status, error: str = ""
) -> bool:
    """Record how a run ended, with the figures set on it, unless it has ended already.

    Compare-and-set on status running: the first outcome recorded stands. A
    spark-submit that timed out is recorded as such, and the job it killed cannot
    overwrite that with the connection error it dies of; a run taken for dead by
    aggregation_run_start stays failed. Returns whether this outcome was recorded;
    `run` is reloaded either way.
    """
    updated = AggregationRun.objects.filter(pk=run.pk, status=AggregationRun.Status.RUNNING).update(
        status=status,
        finished_at=timezone.now(),
        error=error,
        **{name: getattr(run, name) for name in _RUN_FIGURES},
    )
    run.refresh_from_db()
    if not updated:
        logger.warning(
            "run %s had already ended (%s); its later outcome (%s) is not recorded",
            run.pk,
            run.status,
            status,
        )
    return bool(updated)
