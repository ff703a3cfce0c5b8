"""Build the SparkSession the metrics jobs use, with Spark's Kafka source on it.

`local[*]` by default; SPARK_MASTER sends the same job to an existing Spark
cluster. Under spark-submit the master and the jars come from its command line
(see apps.metrics.services.aggregation_submit) and win over anything set here.

The Kafka source (spark-sql-kafka-0-10) comes from Maven Central through
spark_jobs/connector/pom.xml into .cache/spark-jars: Central has no 4.3.0
connector for this pyspark, and the newest one needs a token-provider version
Central lacks, which ivy (spark.jars.packages) cannot pin but Maven can.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from pyspark.sql import SparkSession

REPO_ROOT = Path(__file__).resolve().parent.parent
CONNECTOR_POM = Path(__file__).resolve().parent / "connector" / "pom.xml"
JARS_DIR = Path(os.environ.get("SPARK_KAFKA_JARS_DIR", REPO_ROOT / ".cache" / "spark-jars"))


def connector_jars_ensure() -> list[str]:
    """Paths of the Kafka source jars, fetched with Maven once per pom version."""
    stamp = JARS_DIR / ".pom-sha256"
    digest = hashlib.sha256(CONNECTOR_POM.read_bytes()).hexdigest()
    if not (stamp.exists() and stamp.read_text() == digest):
        JARS_DIR.mkdir(parents=True, exist_ok=True)
        for old in JARS_DIR.glob("*.jar"):
            old.unlink()
        subprocess.run(
            [
                "mvn",
                "-q",
                "-B",
                "-f",
                str(CONNECTOR_POM),
                "dependency:copy-dependencies",
                f"-DoutputDirectory={JARS_DIR}",
                "-DincludeScope=runtime",
            ],
            check=True,
        )
        stamp.write_text(digest)
    jars = sorted(str(p) for p in JARS_DIR.glob("*.jar"))
    if not jars:
        raise RuntimeError(f"no Kafka connector jars in {JARS_DIR}")
    return jars


def spark_session_build(
    *,
    app_name: str = "kafka-balancer-metrics",
    master: str | None = None,
    with_kafka: bool = True,
    extra_conf: dict[str, str] | None = None,
) -> SparkSession:
    builder = SparkSession.builder.appName(app_name)
    master = master or os.environ.get("SPARK_MASTER") or "local[*]"
    conf: dict[str, str] = {
        "spark.master": master,
        "spark.ui.enabled": "false",
        # A metric batch is a few hundred MB at most; 200 shuffle partitions would
        # mostly schedule empty tasks on small machines.
        "spark.sql.shuffle.partitions": os.environ.get("SPARK_SHUFFLE_PARTITIONS", "8"),
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.memory": os.environ.get("SPARK_DRIVER_MEMORY", "2g"),
    }
    if master.startswith("local"):
        # Everything is in this process: stay on loopback rather than the host's address.
        conf["spark.driver.bindAddress"] = conf["spark.driver.host"] = "127.0.0.1"
    if with_kafka:
        conf["spark.jars"] = ",".join(connector_jars_ensure())
    conf.update(extra_conf or {})
    for key, value in conf.items():
        # Under spark-submit the JVM already runs with its own master and jars.
        if os.environ.get("SPARK_SUBMITTED") and key in {"spark.master", "spark.jars"}:
            continue
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(os.environ.get("SPARK_LOG_LEVEL", "WARN"))
    return session
