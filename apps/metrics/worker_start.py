"""What the metrics workers do as they start, so a fresh start shows traffic sooner.

The worker of the `clusters` queue sends a first sync and sample round of every cluster
at once, not one beat interval (10 s) after beat's start.

The aggregation worker warms its SparkSession when it starts, not at its first run.

A session's first build (the JVM, the Kafka source's jars) and first job (class
loading, code generation) is slow on a small, loaded machine, and all of it comes
before the first traffic window of a fresh `make run`. Started with the worker, it
overlaps the cluster's start and the first sample rounds instead.

Only a worker started for the aggregation queue (`-Q` names it: a worker of every
queue would build a session in each of its pool processes, aggregating or not), only
when the aggregation runs in process (METRICS_AGGREGATION_IN_PROCESS), and only a
session that stays warm between runs (a local master, or SPARK_RELEASE_BETWEEN_RUNS
off: a session on a shared Spark cluster would hold its executors from the start).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery.signals import celeryd_after_setup, worker_process_init, worker_ready
from django.conf import settings

from .services.spark_session import spark_session_stays_warm, spark_session_warm

logger = logging.getLogger(__name__)

# Set in the worker's main process, inherited by its pool processes.
_warm_at_start = False
_sample_at_start = False


def aggregation_queue() -> str:
    return settings.CELERY_TASK_ROUTES["apps.metrics.tasks.metrics_aggregate_task"]["queue"]


def sample_queue() -> str:
    return settings.CELERY_TASK_ROUTES["apps.metrics.tasks.metrics_sample_*"]["queue"]


@celeryd_after_setup.connect(dispatch_uid="metrics_spark_warm_decide")
def _decide(sender: Any = None, instance: Any = None, **kwargs: Any) -> None:
    global _warm_at_start, _sample_at_start
    # None: no -Q, the worker consumes every queue.
    queues = instance.app.amqp.queues.consume_from if instance is not None else None
    _sample_at_start = queues is None or sample_queue() in queues
    _warm_at_start = (
        settings.METRICS_AGGREGATION_IN_PROCESS
        and spark_session_stays_warm()
        and queues is not None
        and aggregation_queue() in queues
    )


@worker_process_init.connect(dispatch_uid="metrics_spark_warm_start")
def _warm(**kwargs: Any) -> None:
    # A thread: the pool process must report ready within seconds.
    if _warm_at_start:
        threading.Thread(target=spark_session_warm, name="spark-warm", daemon=True).start()


@worker_ready.connect(dispatch_uid="metrics_first_rounds_at_start")
def _first_rounds(**kwargs: Any) -> None:
    if not _sample_at_start:
        return
    # Imported here: tasks import the services, which this module's importers need not.
    from apps.clusters.tasks import clusters_sync_all

    from .tasks import metrics_sample_all

    try:
        clusters_sync_all.apply_async(expires=settings.CLUSTER_SYNC_INTERVAL)
        metrics_sample_all.apply_async(expires=settings.METRICS_SAMPLE_INTERVAL)
    except Exception:  # a broker hiccup must not stop the worker from starting
        logger.exception("could not send the first sync and sample rounds")
