"""How one aggregation of a cluster runs, as the settings say: in the worker's warm
SparkSession (the default) or through spark-submit.
"""

from __future__ import annotations

from django.conf import settings

from apps.clusters.models import Cluster

from ..models import AggregationRun
from .aggregation import aggregation_run
from .spark_session import spark_session_for_worker
from .spark_submit import aggregation_submit


def aggregation_dispatch(*, cluster: Cluster) -> AggregationRun:
    """One aggregation of a cluster, the way settings say.

    By default (METRICS_AGGREGATION_IN_PROCESS on) the worker keeps one SparkSession
    warm and runs the job in it: no JVM start, no JIT or query compilation per run,
    about twice as fast (bench/README.md), at ~1.3 GB resident. Off, each run is a
    fresh spark-submit: isolated and its memory given back, but slower.
    """
    if settings.METRICS_AGGREGATION_IN_PROCESS:
        return aggregation_run(cluster=cluster, spark=spark_session_for_worker())
    return aggregation_submit(cluster=cluster)
