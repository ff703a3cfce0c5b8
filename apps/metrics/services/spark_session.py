"""The SparkSession aggregations run in, built from the SPARK_* settings; a worker
process keeps one warm between runs, and gives a shared cluster's cores back after each.
"""

from __future__ import annotations

import logging
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


def spark_session_for_worker() -> Any:
    """One SparkSession per worker process, kept warm between runs."""
    global _worker_spark
    if _worker_spark is None:
        _worker_spark = spark_session_create()
    return _worker_spark


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
    if _worker_spark is None or spark_master_is_local() or not settings.SPARK_RELEASE_BETWEEN_RUNS:
        return
    session, _worker_spark = _worker_spark, None
    # pyspark is imported by the processes that aggregate, not by every importer.
    from spark_jobs.sample_cache import sample_caches_drop

    sample_caches_drop()  # kept samples die with the session
    try:
        session.stop()
    except Exception:
        # A session whose JVM is gone has nothing left to give back.
        logger.warning("stopping the Spark session failed", exc_info=True)
