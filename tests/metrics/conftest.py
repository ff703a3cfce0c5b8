"""Fixtures for the metrics tests: ONE local SparkSession for the whole test session."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

# py4j logs "Closing down clientserver connection" from __del__ at interpreter exit,
# after pytest has closed the captured streams; that INFO line is noise.
logging.getLogger("py4j").setLevel(logging.WARNING)


@pytest.fixture(scope="session")
def spark() -> Iterator:
    """local[2] with the Kafka source on it; UI off, few shuffle partitions."""
    from spark_jobs.session import spark_session_build

    session = spark_session_build(
        app_name="kafka-balancer-tests",
        master="local[2]",
        extra_conf={"spark.sql.shuffle.partitions": "2", "spark.driver.memory": "1g"},
    )
    yield session
    session.stop()
