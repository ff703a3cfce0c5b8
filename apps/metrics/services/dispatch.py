"""How one aggregation of a cluster runs, as the settings say: in the worker's warm
SparkSession (the default) or through spark-submit.
"""

from __future__ import annotations

import logging
import traceback

from django.conf import settings

from apps.clusters.models import Cluster

from ..models import AggregationRun
from .aggregation import aggregation_run
from .runs import aggregation_run_finish, aggregation_run_start
from .spark_session import spark_session_for_worker, spark_session_release
from .spark_submit import aggregation_submit

logger = logging.getLogger(__name__)


def aggregation_dispatch(*, cluster: Cluster) -> AggregationRun:
    """One aggregation of a cluster, the way settings say.

    By default (METRICS_AGGREGATION_IN_PROCESS on) the worker keeps one SparkSession
    warm and runs the job in it: no JVM start, no JIT or query compilation per run,
    much faster (bench/results/2026-11-24.md), at the cost of the session's resident
    memory. Off, each run is a fresh spark-submit: isolated and its memory given back,
    but slower.

    In-process, the run's lock is taken before the session is built (a run that
    finds it taken costs no Spark resources), and a session on a shared Spark
    cluster is stopped after the run (spark_session_release).
    """
    if settings.METRICS_AGGREGATION_IN_PROCESS:
        run = aggregation_run_start(cluster=cluster, spark_master=settings.SPARK_MASTER)
        try:
            try:
                spark = spark_session_for_worker()
            except Exception:
                # No session (master unreachable, no jars): Spark's own error on the run.
                logger.exception("no Spark session for the aggregation of %s", cluster.name)
                aggregation_run_finish(
                    run=run,
                    status=AggregationRun.Status.FAILED,
                    error=traceback.format_exc()[-10_000:],
                )
                return run
            return aggregation_run(cluster=cluster, spark=spark, run=run)
        finally:
            spark_session_release()
    return aggregation_submit(cluster=cluster)
