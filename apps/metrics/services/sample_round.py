"""One scheduled sample round of a cluster: at most one in flight, skipped while the
cluster is in backoff, and logged once per change between failing and working."""

from __future__ import annotations

import logging

from django.utils import timezone

from apps.clusters.backoff import clusters_due
from apps.clusters.models import Cluster, ClusterRound
from apps.clusters.rounds import round_degraded_record, round_lease, round_outcome_record

from .sampling import SampleResult, metrics_sample

logger = logging.getLogger(__name__)


def metrics_sample_round(*, cluster: Cluster) -> SampleResult | None:
    """Sample the cluster unless it is in backoff or its last round still runs.

    A failure is recorded on the cluster's sample round, not raised: a traceback per
    round for a dead cluster would bury every other line of the worker's log.
    """
    if not clusters_due(now=timezone.now()).filter(pk=cluster.pk).exists():
        return None
    with round_lease(cluster=cluster, kind=ClusterRound.SAMPLE) as lease:
        if lease is None:
            return None
        try:
            result = metrics_sample(cluster=cluster)
        except Exception as exc:  # librdkafka, kafka-python and the producer raise many types
            error = str(exc) or exc.__class__.__name__
            if round_outcome_record(row=lease, error=error):
                logger.warning("cluster %s: sampling failed: %s", cluster.name, error)
            else:
                logger.debug("cluster %s: sampling failed: %s", cluster.name, error)
            return None
        if round_outcome_record(row=lease, error=""):
            logger.warning("cluster %s: sampling works again", cluster.name)
        if round_degraded_record(row=lease, degraded=result.sizes_error):
            if result.sizes_error:
                logger.warning(
                    "cluster %s: replica sizes unknown, estimated from offsets "
                    "(DescribeLogDirs failed: %s)",
                    cluster.name,
                    result.sizes_error,
                )
            else:
                logger.warning("cluster %s: replica sizes known again", cluster.name)
        return result
