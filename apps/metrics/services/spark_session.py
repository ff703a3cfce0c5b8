"""The SparkSession aggregations run in, built from the SPARK_* settings; a worker
process keeps one warm between runs, and gives a shared cluster's cores back after each.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from django.conf import settings

logger = logging.getLogger(__name__)


def spark_master_is_local() -> bool:
    """True when Spark runs inside this process (local[...]): nothing shared to give back."""
    return settings.SPARK_MASTER.startswith("local")


def spark_share_settings() -> dict[str, Any]:
    """The share of the Spark cluster and the driver's address, as the settings say."""
    return {
        "cores_max": settings.SPARK_CORES_MAX,
        "executor_memory": settings.SPARK_EXECUTOR_MEMORY,
        "driver_host": settings.SPARK_DRIVER_HOST,
        "driver_bind_address": settings.SPARK_DRIVER_BIND_ADDRESS,
    }


def spark_session_create() -> Any:
    """A session on SPARK_MASTER with the Kafka source, sized by the settings."""
    # pyspark is imported by the processes that aggregate, not by every importer.
    from spark_jobs.session import spark_session_build

    return spark_session_build(
        master=settings.SPARK_MASTER,
        jars_dir=settings.SPARK_KAFKA_JARS_DIR,
        shuffle_partitions=settings.SPARK_SHUFFLE_PARTITIONS,
        driver_memory=settings.SPARK_DRIVER_MEMORY,
        log_level=settings.SPARK_LOG_LEVEL,
        **spark_share_settings(),
    )


_worker_spark: Any = None
# Held while the worker's session is built: a run waits for a session being warmed
# (spark_session_warm) instead of building a second one.
_worker_spark_lock = threading.Lock()


def spark_session_for_worker() -> Any:
    """One SparkSession per worker process, kept warm between runs."""
    with _worker_spark_lock:
        return spark_session_for_worker_locked()


def spark_session_for_worker_locked() -> Any:
    """spark_session_for_worker, for a caller holding the lock."""
    global _worker_spark
    if _worker_spark is None:
        _worker_spark = spark_session_create()
    return _worker_spark


def spark_session_stays_warm() -> bool:
    """Whether the worker's session outlives a run (see spark_session_release)."""
    return spark_master_is_local() or not settings.SPARK_RELEASE_BETWEEN_RUNS


def spark_session_warm() -> None:
    """Build the worker's session ahead of its first run (the JVM start, the Kafka
    source's jars) and run the job once on made-up samples (its classes loaded, its
    code generated): run in a thread when the aggregation worker starts, while the
    first samples are taken. A run that comes meanwhile waits for the session. A
    failure is logged; the first run then tries again and records Spark's error."""
    # pyspark is imported by the processes that aggregate, not by every importer.
    from spark_jobs.partition_loads import aggregation_warm_up

    try:
        with _worker_spark_lock:
            spark = spark_session_for_worker_locked()
            aggregation_warm_up(
                spark,
                window_ms=settings.METRICS_WINDOW_SECONDS * 1000,
                slide_ms=settings.METRICS_WINDOW_SLIDE_SECONDS * 1000,
            )
    except Exception:
        logger.warning("warming the Spark session failed; the first run builds it", exc_info=True)
    else:
        logger.info("Spark session warm for the aggregations")


def spark_session_release() -> None:
    """After a run: stop the worker's session if it holds a shared cluster's executors.

    A session on a standalone (or YARN, Kubernetes) master keeps its executors, and
    so its cores, for as long as it lives; a warm one would starve every other
    application (a spark-submit run included) between runs. Stopping the
    SparkContext gives them back at once while the driver JVM, with its loaded
    classes and JIT, stays up for the next run. A local[...] session holds nothing
    shared and stays warm; so does any session with SPARK_RELEASE_BETWEEN_RUNS off.
    """
    global _worker_spark
    if _worker_spark is None or spark_session_stays_warm():
        return
    with _worker_spark_lock:
        session, _worker_spark = _worker_spark, None
    # pyspark is imported by the processes that aggregate, not by every importer.
    from spark_jobs.sample_cache import sample_caches_drop

    sample_caches_drop()  # kept samples die with the session
    try:
        session.stop()
    except Exception:
        # A session whose JVM is gone has nothing left to give back.
        logger.warning("stopping the Spark session failed", exc_info=True)
