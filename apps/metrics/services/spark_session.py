"""The SparkSession aggregations run in, built from the SPARK_* settings; a worker
process keeps one warm between runs.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings


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
    )


_worker_spark: Any = None


def spark_session_for_worker() -> Any:
    """One SparkSession per worker process, kept warm between runs."""
    global _worker_spark
    if _worker_spark is None:
        _worker_spark = spark_session_create()
    return _worker_spark
