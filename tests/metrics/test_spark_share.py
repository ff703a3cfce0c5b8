"""A bounded share of a shared Spark cluster, given back between runs; the driver's
address; and a failed run that keeps Spark's own error (no JVM: fakes and a
stand-in for spark-submit)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from devkit.polling import wait_until

from apps.metrics.models import AggregationRun
from apps.metrics.services import (
    aggregation_dispatch,
    aggregation_run_start,
    aggregation_submit,
    spark_submit_command,
)
from apps.metrics.services import spark_session as spark_session_module
from apps.metrics.services.runs import aggregation_run_finish
from spark_jobs.session import spark_share_conf
from tests.support.factories import cluster_with_dead_broker_make

pytestmark = pytest.mark.django_db


def test_it_bounds_the_share_and_sets_the_driver_address_for_a_cluster_master():
    conf = spark_share_conf(
        master="spark://spark-master:7077",
        cores_max=4,
        executor_memory="2g",
        driver_host="balancer.internal",
        driver_bind_address="0.0.0.0",
    )

    assert conf == {
        "spark.cores.max": "4",
        "spark.executor.memory": "2g",
        "spark.driver.host": "balancer.internal",
        "spark.driver.bindAddress": "0.0.0.0",
    }


def test_it_leaves_spark_its_defaults_unless_told():
    assert spark_share_conf(master="spark://spark-master:7077") == {}


def test_it_keeps_a_local_master_on_loopback_unless_told():
    assert spark_share_conf(master="local[2]") == {
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
    }
    assert spark_share_conf(master="local[*]", driver_host="10.0.0.5") == {
        "spark.driver.host": "10.0.0.5",
        "spark.driver.bindAddress": "10.0.0.5",
    }


def test_it_passes_the_share_and_the_driver_address_to_spark_submit(settings):
    settings.SPARK_MASTER = "spark://spark-master:7077"
    settings.SPARK_CORES_MAX = 2
    settings.SPARK_EXECUTOR_MEMORY = "1g"
    settings.SPARK_DRIVER_HOST = "balancer.internal"
    settings.SPARK_DRIVER_BIND_ADDRESS = "0.0.0.0"
    settings.SPARK_SUBMIT_OPTIONS = "--conf spark.cores.max=3"
    cluster = cluster_with_dead_broker_make()
    run = aggregation_run_start(cluster=cluster)

    cmd = spark_submit_command(cluster=cluster, run=run)

    confs = [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "--conf"]
    assert confs == [
        "spark.ui.enabled=false",
        "spark.cores.max=2",
        "spark.executor.memory=1g",
        "spark.driver.host=balancer.internal",
        "spark.driver.bindAddress=0.0.0.0",
        # SPARK_SUBMIT_OPTIONS comes last, so it wins.
        "spark.cores.max=3",
    ]


class FakeSession:
    def __init__(self) -> None:
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True


@pytest.mark.parametrize(
    ("master", "release", "stopped"),
    [
        ("spark://127.0.0.1:7077", True, True),
        ("spark://127.0.0.1:7077", False, False),
        ("local[2]", True, False),
    ],
)
def test_it_gives_a_shared_clusters_executors_back_after_each_in_process_run(
    settings, monkeypatch, master, release, stopped
):
    settings.SPARK_MASTER = master
    settings.SPARK_RELEASE_BETWEEN_RUNS = release
    settings.METRICS_AGGREGATION_IN_PROCESS = True
    sessions: list[FakeSession] = []

    def session_create() -> FakeSession:
        sessions.append(FakeSession())
        return sessions[-1]

    monkeypatch.setattr(spark_session_module, "_worker_spark", None)
    monkeypatch.setattr(spark_session_module, "spark_session_create", session_create)
    monkeypatch.setattr(
        "apps.metrics.services.dispatch.aggregation_run",
        lambda *, cluster, spark, run: aggregation_run_finish(
            run=run, status=AggregationRun.Status.SUCCEEDED
        ),
    )
    cluster = cluster_with_dead_broker_make()

    aggregation_dispatch(cluster=cluster)
    aggregation_dispatch(cluster=cluster)

    # Released: a new session per run, each stopped after it. Kept: one warm session.
    assert [s.stopped for s in sessions] == ([True, True] if stopped else [False])


def test_it_records_a_session_that_cannot_start_and_releases_the_lock(settings, monkeypatch):
    settings.METRICS_AGGREGATION_IN_PROCESS = True

    def session_fails():
        raise RuntimeError("Master spark://127.0.0.1:1 unreachable: all masters are unresponsive")

    monkeypatch.setattr("apps.metrics.services.dispatch.spark_session_for_worker", session_fails)
    cluster = cluster_with_dead_broker_make()

    run = aggregation_dispatch(cluster=cluster)

    assert run.status == AggregationRun.Status.FAILED
    assert "all masters are unresponsive" in run.error
    aggregation_run_start(cluster=cluster)  # the lock is free again


def test_it_keeps_the_first_outcome_of_a_run():
    cluster = cluster_with_dead_broker_make()
    run = aggregation_run_start(cluster=cluster)
    assert aggregation_run_finish(
        run=run, status=AggregationRun.Status.FAILED, error="spark-submit timed out after 900 s"
    )

    # The killed job's driver dies later, of the connection its JVM no longer answers.
    late = AggregationRun.objects.get(pk=run.pk)
    recorded = aggregation_run_finish(
        run=late,
        status=AggregationRun.Status.FAILED,
        error="py4j.protocol.Py4JNetworkError: [Errno 111] Connection refused",
    )

    assert not recorded
    assert late.error == "spark-submit timed out after 900 s"


def _script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "fake_spark_submit.py"
    path.write_text(textwrap.dedent(body))
    return [sys.executable, str(path)]


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in {"Z", "X"}  # dead, waiting to be reaped by init


def test_it_stops_a_submission_that_overruns_and_keeps_sparks_output(
    settings, monkeypatch, tmp_path
):
    settings.METRICS_AGGREGATION_TIMEOUT = 2.0
    pid_file = tmp_path / "driver.pid"
    # As spark-submit: a JVM that starts the Python driver, then waits for executors.
    command = _script(
        tmp_path,
        f"""
        import subprocess, sys, time
        driver = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pid_file)!r}, "w").write(str(driver.pid))
        print("WARN TaskSchedulerImpl: Initial job has not accepted any resources; check "
              "your cluster UI to ensure that workers are registered and have sufficient "
              "resources", flush=True)
        time.sleep(600)
        """,
    )
    monkeypatch.setattr(
        "apps.metrics.services.spark_submit.spark_submit_command", lambda **kw: command
    )
    cluster = cluster_with_dead_broker_make()

    run = aggregation_submit(cluster=cluster)

    assert run.status == AggregationRun.Status.FAILED
    assert run.error.startswith("spark-submit timed out after 2 s")
    assert "Initial job has not accepted any resources" in run.error
    # The driver it started was ended with it: it cannot record anything later.
    driver = int(pid_file.read_text())
    wait_until(lambda: _gone(driver), 10, 0.1, what="the driver process to end")


def test_it_adds_sparks_output_to_the_error_the_job_recorded(monkeypatch, tmp_path):
    command = _script(
        tmp_path,
        """
        import sys
        print("ERROR SparkContext: Error initializing SparkContext.", flush=True)
        print("org.apache.spark.SparkException: Could not parse Master URL", flush=True)
        sys.exit(1)
        """,
    )

    def job_records_its_failure(*, cluster, run):
        # What metrics_aggregate does in the job before it exits 1.
        aggregation_run_finish(
            run=run, status=AggregationRun.Status.FAILED, error="Traceback: Py4JJavaError"
        )
        return command

    monkeypatch.setattr(
        "apps.metrics.services.spark_submit.spark_submit_command", job_records_its_failure
    )
    cluster = cluster_with_dead_broker_make()

    run = aggregation_submit(cluster=cluster)

    assert run.status == AggregationRun.Status.FAILED
    assert run.error.startswith("Traceback: Py4JJavaError")
    assert "spark-submit exited 1" in run.error
    assert "Could not parse Master URL" in run.error
