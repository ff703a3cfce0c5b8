"""Aggregation through spark-submit: a fresh JVM runs `manage.py metrics_aggregate`
for one cluster and records the run; a job that dies first, or overruns, is recorded
here with the end of Spark's output.
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from django.conf import settings

from apps.clusters.models import Cluster

from ..models import AggregationRun
from .runs import aggregation_run_finish, aggregation_run_start
from .spark_session import spark_share_settings

logger = logging.getLogger(__name__)

# How much of spark-submit's output a failed run keeps: Spark's error is at its end.
OUTPUT_TAIL_CHARS = 5_000


def spark_submit_command(*, cluster: Cluster, run: AggregationRun) -> list[str]:
    """spark-submit of the metrics_aggregate command with the Kafka source jars.

    SPARK_MASTER picks the cluster; the share (SPARK_CORES_MAX, SPARK_EXECUTOR_MEMORY)
    and the driver's address (SPARK_DRIVER_HOST, SPARK_DRIVER_BIND_ADDRESS) go in as
    --conf, before SPARK_SUBMIT_OPTIONS, which adds any other spark-submit flags (and
    wins); SPARK_CONF_DIR's spark-defaults.conf applies as usual.
    """
    from spark_jobs.session import connector_jars_ensure, spark_share_conf

    submit = Path(sys.executable).with_name("spark-submit")
    share = spark_share_conf(master=settings.SPARK_MASTER, **spark_share_settings())
    return [
        str(submit) if submit.exists() else "spark-submit",
        "--master",
        settings.SPARK_MASTER,
        "--jars",
        ",".join(connector_jars_ensure(jars_dir=settings.SPARK_KAFKA_JARS_DIR)),
        "--conf",
        "spark.ui.enabled=false",
        *[arg for key, value in share.items() for arg in ("--conf", f"{key}={value}")],
        *shlex.split(settings.SPARK_SUBMIT_OPTIONS),
        str(settings.BASE_DIR / "manage.py"),
        "metrics_aggregate",
        "--cluster",
        cluster.name,
        "--run-id",
        str(run.pk),
    ]


def _process_group_end(proc: subprocess.Popen, *, grace: float = 10.0) -> None:
    """SIGTERM to the job's process group (spark-submit's JVM and the Python driver it
    started), SIGKILL after `grace` seconds: nothing of a killed run lives on."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _output_tail(path: Path, *, limit: int = OUTPUT_TAIL_CHARS) -> str:
    with path.open("rb") as f:
        f.seek(max(0, path.stat().st_size - limit))
        return f.read().decode("utf-8", errors="replace")[-limit:]


def aggregation_submit(*, cluster: Cluster) -> AggregationRun:
    """Run one aggregation of a cluster through spark-submit and return its run.

    The lock is taken here, before the JVM starts, so a second submission fails
    fast with AggregationAlreadyRunning. The job fills in the run. If it fails, the
    end of spark-submit's output (Spark's own error, e.g. "Initial job has not
    accepted any resources") is added to the run's error; if it dies before it can
    record, or runs past METRICS_AGGREGATION_TIMEOUT (then its whole process group is
    ended), the run is marked failed here with that output. The first outcome
    recorded stands (aggregation_run_finish).
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
    # A file, not a pipe: Spark's output is unbounded, and nothing blocks on it.
    with tempfile.TemporaryDirectory(prefix="spark-submit-") as tmp:
        log = Path(tmp) / "output.log"
        try:
            with log.open("wb") as out:
                proc = subprocess.Popen(
                    spark_submit_command(cluster=cluster, run=run),
                    cwd=settings.BASE_DIR,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            try:
                code = proc.wait(timeout=timeout)
                ended = f"spark-submit exited {code}"
            except subprocess.TimeoutExpired:
                _process_group_end(proc)
                ended = f"spark-submit timed out after {timeout:.0f} s and was stopped"
            output = _output_tail(log)
        except (OSError, subprocess.SubprocessError) as exc:
            ended, output = f"spark-submit could not run: {type(exc).__name__}: {exc}", ""
    run.refresh_from_db()
    if run.status == AggregationRun.Status.RUNNING:
        logger.warning("aggregation of %s ended without recording: %s", cluster.name, ended)
        aggregation_run_finish(
            run=run, status=AggregationRun.Status.FAILED, error=f"{ended}\n{output}"
        )
    elif run.status == AggregationRun.Status.FAILED and output:
        # The job recorded its traceback; Spark's own account is in its output.
        AggregationRun.objects.filter(pk=run.pk).update(
            error=f"{run.error}\n--- {ended}; end of its output ---\n{output}"
        )
        run.refresh_from_db()
    return run
