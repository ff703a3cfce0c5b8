"""Build the SparkSession the metrics jobs use, with Spark's Kafka source on it.

The caller says where it runs (`master`, `local[*]` by default) and how it is sized;
the Django side passes the SPARK_* settings (apps.metrics.services.spark_session).
Under spark-submit the master and the jars come from its command line (see
apps.metrics.services.spark_submit) and win over anything passed here.

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
JARS_DIR = REPO_ROOT / ".cache" / "spark-jars"

# Spark's default (secret|password|token|access key) plus the Kafka source's options that
# carry secrets: the SASL JAAS config (password inside) and the PEM private key. Spark
# masks matching conf values and data source options in plans, logs and error messages.
REDACTION_REGEX = r"(?i)secret|password|token|access[.]?key|keystore[.]key|jaas[.]config"


def connector_jars_ensure(*, jars_dir: Path = JARS_DIR) -> list[str]:
    """Paths of the Kafka source jars, fetched with Maven once per pom version."""
    stamp = jars_dir / ".pom-sha256"
    digest = hashlib.sha256(CONNECTOR_POM.read_bytes()).hexdigest()
    if not (stamp.exists() and stamp.read_text() == digest):
        jars_dir.mkdir(parents=True, exist_ok=True)
        for old in jars_dir.glob("*.jar"):
            old.unlink()
        subprocess.run(
            [
                "mvn",
                "-q",
                "-B",
                "-f",
                str(CONNECTOR_POM),
                "dependency:copy-dependencies",
                f"-DoutputDirectory={jars_dir}",
                "-DincludeScope=runtime",
            ],
            check=True,
        )
        stamp.write_text(digest)
    jars = sorted(str(p) for p in jars_dir.glob("*.jar"))
    if not jars:
        raise RuntimeError(f"no Kafka connector jars in {jars_dir}")
    return jars


def spark_share_conf(
    *,
    master: str,
    cores_max: int = 0,
    executor_memory: str = "",
    driver_host: str = "",
    driver_bind_address: str = "",
) -> dict[str, str]:
    """Spark conf for the job's share of the cluster and where its driver listens.

    `cores_max` (spark.cores.max; 0 leaves it unset: every core the master offers)
    and `executor_memory` bound what the job takes of a shared cluster. The driver
    host is where executors connect back to (spark.driver.host); the bind address is
    what the driver listens on, when that differs (NAT, containers). A local[...]
    master keeps everything in this process: loopback unless told otherwise.
    """
    conf: dict[str, str] = {}
    if cores_max > 0:
        conf["spark.cores.max"] = str(cores_max)
    if executor_memory:
        conf["spark.executor.memory"] = executor_memory
    if master.startswith("local"):
        driver_host = driver_host or "127.0.0.1"
        driver_bind_address = driver_bind_address or driver_host
    if driver_host:
        conf["spark.driver.host"] = driver_host
    if driver_bind_address:
        conf["spark.driver.bindAddress"] = driver_bind_address
    return conf


def spark_session_build(
    *,
    app_name: str = "kafka-balancer-metrics",
    master: str = "local[*]",
    with_kafka: bool = True,
    jars_dir: Path = JARS_DIR,
    shuffle_partitions: int = 8,
    driver_memory: str = "2g",
    log_level: str = "WARN",
    cores_max: int = 0,
    executor_memory: str = "",
    driver_host: str = "",
    driver_bind_address: str = "",
    extra_conf: dict[str, str] | None = None,
) -> SparkSession:
    """The session on `master`; see spark_share_conf for the share and the driver host."""
    builder = SparkSession.builder.appName(app_name)
    conf: dict[str, str] = {
        "spark.master": master,
        "spark.ui.enabled": "false",
        # A metric batch is a few hundred MB at most; 200 shuffle partitions would
        # mostly schedule empty tasks on small machines.
        "spark.sql.shuffle.partitions": str(shuffle_partitions),
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.memory": driver_memory,
        "spark.redaction.regex": REDACTION_REGEX,
    }
    conf.update(
        spark_share_conf(
            master=master,
            cores_max=cores_max,
            executor_memory=executor_memory,
            driver_host=driver_host,
            driver_bind_address=driver_bind_address,
        )
    )
    if with_kafka:
        conf["spark.jars"] = ",".join(connector_jars_ensure(jars_dir=jars_dir))
    conf.update(extra_conf or {})
    # pyspark attaches to a JVM that spark-submit started through this variable;
    # that JVM already runs with the master and jars of spark-submit's command line.
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ
    for key, value in conf.items():
        if submitted and key in {"spark.master", "spark.jars"}:
            continue
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(log_level)
    return session
