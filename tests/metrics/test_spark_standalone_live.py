"""The aggregation on a real Spark standalone cluster: a master and a worker started
from the pip pyspark's own launcher on loopback, SPARK_MASTER pointing at them, one
run in the aggregation worker's session and one through spark-submit, both over
samples of known traffic in the dev Kafka cluster's metrics topic.

The runs happen in a child process with a SQLite file of its own (standalone_runs.py):
spark-submit's job is a separate Django process that must see the same database, and
this process may already hold the test session's local SparkSession.

Ports: SPARK_TEST_PORT_BASE (default 34700) + 7 master, + 8 master UI, + 9 worker UI,
+ 10 worker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyspark
import pytest
from confluent_kafka import Producer
from devkit import live
from devkit.polling import wait_until

from apps.kafka_layer.clients import admin_client_create
from spark_jobs.metrics_schema import metric_key_encode, metric_record_encode

pytestmark = [
    pytest.mark.integration,
    pytest.mark.spark,
    pytest.mark.slow,
    # Three JVMs and two drivers: 355 s measured at load average 18-45 on 2 cores.
    pytest.mark.timeout(1500),
]

REPO = Path(__file__).resolve().parents[2]
SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"
PORT_BASE = int(os.environ.get("SPARK_TEST_PORT_BASE", "34700"))
WORKER_CORES = 2
CORES_MAX = 1  # the balancer's share: half the worker

WINDOW_MS = 60_000
SAMPLE_MS = 10_000
# Known traffic per partition of one topic: messages per second, bytes per message,
# and whether a consumer group reads it (at the producer's pace).
TRAFFIC = [(50, 100, True), (20, 1_000, False), (0, 500, True), (7, 200, True)]


@dataclass(frozen=True)
class StandaloneSpark:
    master_url: str
    ui_url: str


def _json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


@pytest.fixture(scope="module")
def standalone_spark(tmp_path_factory) -> Iterator[StandaloneSpark]:
    """A master and one worker (WORKER_CORES cores, 1 GB) on loopback, stopped at the end."""
    work = tmp_path_factory.mktemp("spark-standalone")
    host = "127.0.0.1"
    master_port, ui_port, worker_ui_port, worker_port = (PORT_BASE + n for n in (7, 8, 9, 10))
    master_url = f"spark://{host}:{master_port}"
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": host,
        "SPARK_LOG_DIR": str(work),
        "SPARK_WORKER_DIR": str(work / "work"),
        # The daemons themselves need little; the default is 1 GB each.
        "SPARK_DAEMON_MEMORY": "256m",
        "SPARK_NO_DAEMONIZE": "1",
    }
    commands = {
        "master": [
            "org.apache.spark.deploy.master.Master",
            *("--host", host, "--port", str(master_port), "--webui-port", str(ui_port)),
        ],
        "worker": [
            "org.apache.spark.deploy.worker.Worker",
            *("--host", host, "--port", str(worker_port), "--webui-port", str(worker_ui_port)),
            *("--cores", str(WORKER_CORES), "--memory", "1g", "--work-dir", str(work / "work")),
            master_url,
        ],
    }
    processes = []
    try:
        for name, args in commands.items():
            with (work / f"{name}.log").open("w") as log:
                processes.append(
                    subprocess.Popen(
                        [str(SPARK_CLASS), *args],
                        env=env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                )
        ui_url = f"http://{host}:{ui_port}"

        def worker_alive() -> bool:
            for p in processes:
                assert p.poll() is None, (work / "master.log").read_text()[-3000:]
            state = _json(f"{ui_url}/json/")
            return any(w["state"] == "ALIVE" for w in state["workers"])

        wait_until(
            worker_alive,
            120,
            0.5,
            what="a Spark worker registered with the master",
            # Not listening yet, too busy to answer in time, or up with an empty page.
            retry_on=(OSError, ValueError),
        )
        yield StandaloneSpark(master_url=master_url, ui_url=ui_url)
    finally:
        for p in reversed(processes):
            try:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(30)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)


@pytest.fixture
def metrics_topic(kafka_cluster) -> Iterator[tuple[str, int]]:
    """A metrics topic with one closed window of samples of TRAFFIC; (name, window start)."""
    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"it-standalone-{uuid.uuid4().hex[:8]}-samples"
    admin = admin_client_create(bootstrap_servers=bootstrap)
    live.topic_create(admin, topic, partitions=2, rf=1)
    window_start = (int(time.time() * 1000) // WINDOW_MS - 2) * WINDOW_MS
    producer = Producer({"bootstrap.servers": bootstrap})
    # Six samples 10 s apart in the window, and one of the next round, which closes it.
    for k in range(WINDOW_MS // SAMPLE_MS + 1):
        for partition, (rate, record_bytes, consumed) in enumerate(TRAFFIC):
            end = 1_000 + rate * k * SAMPLE_MS // 1000
            producer.produce(
                topic,
                key=metric_key_encode(topic="orders", partition=partition),
                value=metric_record_encode(
                    ts_ms=window_start + k * SAMPLE_MS,
                    topic="orders",
                    partition=partition,
                    leader=1 + partition % 3,
                    replicas=[1 + partition % 3, 1 + (partition + 1) % 3],
                    start_offset=0,
                    end_offset=end,
                    sizes={1 + partition % 3: end * record_bytes},
                    committed={"readers": end - 5} if consumed else {},
                ),
            )
    assert producer.flush(30) == 0
    yield topic, window_start
    admin.delete_topics([topic])[topic].result(30)


def test_it_aggregates_on_a_standalone_cluster_in_process_and_with_spark_submit(
    standalone_spark, metrics_topic, kafka_cluster, tmp_path
):
    topic, window_start = metrics_topic
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "PYTHONPATH": str(REPO),
        "METRICS_TOPIC": topic,
        "METRICS_WINDOW_SECONDS": str(WINDOW_MS // 1000),
        "METRICS_WINDOW_SLIDE_SECONDS": str(WINDOW_MS // 1000),
        "SPARK_MASTER": standalone_spark.master_url,
        "SPARK_CORES_MAX": str(CORES_MAX),
        "SPARK_EXECUTOR_MEMORY": "512m",
        "SPARK_DRIVER_MEMORY": "512m",
        "SPARK_SHUFFLE_PARTITIONS": "2",
        "SPARK_DRIVER_HOST": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        # A spark-submit left waiting for cores fails the test with Spark's output
        # (generous: on a busy 2-core machine a healthy run can take minutes).
        "METRICS_AGGREGATION_TIMEOUT": "600",
    }
    log = tmp_path / "runs.log"
    with log.open("w") as stderr:
        child = subprocess.run(
            [
                sys.executable,
                str(Path(__file__).with_name("standalone_runs.py")),
                kafka_cluster.bootstrap_servers,
                standalone_spark.ui_url,
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            timeout=1200,
        )
    assert child.returncode == 0, log.read_text()[-5000:]
    seen = json.loads(child.stdout.strip().splitlines()[-1])

    # The in-process session held the configured share while it was up, and the run
    # gave it back: nothing of the balancer runs on the cluster afterwards.
    assert [(a["cores"], a["memory"]) for a in seen["apps_during"]] == [(CORES_MAX, 512)], seen[
        "apps_during"
    ]
    assert seen["apps_after"] == [], seen["apps_after"]

    for name, run in seen["runs"].items():
        assert run["status"] == "succeeded", (name, run["error"][:500], run["error"][-2000:])
        assert run["spark_master"] == standalone_spark.master_url
        assert run["input_rows"] == len(TRAFFIC) * (WINDOW_MS // SAMPLE_MS + 1), name
        loads = [load for load in run["loads"] if load["window_start_ms"] == window_start]
        assert len(loads) == len(TRAFFIC), (name, run["loads"])
        for load, (rate, record_bytes, consumed) in zip(loads, TRAFFIC, strict=True):
            assert load["samples"] == WINDOW_MS // SAMPLE_MS, (name, load)
            assert load["messages_in"] == pytest.approx(rate), (name, load)
            assert load["bytes_in"] == pytest.approx(rate * record_bytes), (name, load)
            assert load["bytes_out"] == pytest.approx(rate * record_bytes if consumed else 0), (
                name,
                load,
            )
            last_end = 1_000 + rate * (WINDOW_MS // SAMPLE_MS - 1) * SAMPLE_MS // 1000
            assert load["size"] == last_end * record_bytes, (name, load)
