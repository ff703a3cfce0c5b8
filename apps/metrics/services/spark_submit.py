"""Aggregation through spark-submit: a fresh JVM runs `manage.py metrics_aggregate`
for one cluster and records the run; a job that dies first is recorded here.
"""

from __future__ import annotations

import logging
import os
import shlex
import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from apps.clusters.models import Cluster

from ..models import AggregationRun
from .runs import aggregation_run_start

logger = logging.getLogger(__name__)


def spark_submit_command(*, cluster: Cluster, run: AggregationRun) -> list[str]:
    """spark-submit of the metrics_aggregate command with the Kafka source jars.

    SPARK_MASTER picks the cluster; SPARK_SUBMIT_OPTIONS adds any other
    spark-submit flags (e.g. "--executor-memory 4g"); SPARK_CONF_DIR's
    spark-defaults.conf applies as usual.
    """
    from spark_jobs.session import connector_jars_ensure

    submit = Path(sys.executable).with_name("spark-submit")
    return [
        str(submit) if submit.exists() else "spark-submit",
        "--master",
        settings.SPARK_MASTER,
        "--jars",
        ",".join(connector_jars_ensure(jars_dir=settings.SPARK_KAFKA_JARS_DIR)),
        "--conf",
        "spark.ui.enabled=false",
        *shlex.split(settings.SPARK_SUBMIT_OPTIONS),
        str(settings.BASE_DIR / "manage.py"),
        "metrics_aggregate",
        "--cluster",
        cluster.name,
        "--run-id",
        str(run.pk),
    ]


def aggregation_submit(*, cluster: Cluster) -> AggregationRun:
    """Run one aggregation of a cluster through spark-submit and return its run.

    The lock is taken here, before the JVM starts, so a second submission fails
    fast with AggregationAlreadyRunning. The job fills in the run; if it dies
    before it can, the run is marked failed here with the end of its output.
    """
    run = aggregation_run_start(cluster=cluster, spark_master=settings.SPARK_MASTER)
    # The job is a Django process too: it inherits this environment, so the same
    # settings, with the repository importable and this interpreter as Spark's Python.
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(settings.BASE_DIR), os.environ.get("PYTHONPATH")])
        ),
        "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
        "PYSPARK_DRIVER_PYTHON": os.environ.get("PYSPARK_DRIVER_PYTHON", sys.executable),
    }
    timeout = settings.METRICS_AGGREGATION_TIMEOUT
    try:
        proc = subprocess.run(
            spark_submit_command(cluster=cluster, run=run),
            cwd=settings.BASE_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        code, output = proc.returncode, (proc.stdout + proc.stderr)
    except (OSError, subprocess.SubprocessError) as exc:
        code, output = -1, f"{type(exc).__name__}: {exc}"
    run.refresh_from_db()
    if run.status == AggregationRun.Status.RUNNING:
        logger.warning("aggregation of %s exited %s without recording", cluster.name, code)
        run.status = AggregationRun.Status.FAILED
        run.finished_at = timezone.now()
        run.error = f"spark-submit exited {code}\n{output[-5000:]}"
        run.save()
    return run
