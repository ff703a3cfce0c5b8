"""The database (PostgreSQL) restarted mid-execution: the executing worker rides it out
(it sends nothing until the database answers, then reconciles with Kafka under its lease
taken again), the plan completes and nothing is sent twice. acks=all traffic on the
plan's topic alongside. The worker is tests/plans/worker_process.py on a throwaway
PostgreSQL server (as scripts/test-postgres starts one, on PG_TEST_PORT)."""

import glob
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from devkit import live

from tests.faults.traffic import Traffic
from tests.faults.worker import (
    ON_ONE_AND_TWO,
    worker_env,
    worker_report,
    worker_start_until_in_flight,
    worker_topic,
)

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


class Postgres:
    def __init__(self, data: Path, port: int) -> None:
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
        if not bins:
            pytest.fail("PostgreSQL is not installed; run: sudo apt-get install -y postgresql")
        self.bin, self.data, self.port = Path(bins[-1]), data, port
        # PostgreSQL refuses to run as root.
        self.run_as = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        self.url = f"postgres://balancer@127.0.0.1:{port}/balancer"

    def _run(self, *args: str) -> None:
        subprocess.run([*self.run_as, *args], check=True, capture_output=True, timeout=120)

    def init(self) -> None:
        if self.run_as:
            shutil.chown(self.data, "postgres")
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "balancer", "--auth=trust")
        self.start()
        createdb = [str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port)]
        self._run(*createdb, "-U", "balancer", "balancer")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-w",
            "-l",
            str(self.data / "server.log"),
            "-o",
            options,
            "start",
        )

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")


@pytest.fixture
def postgres() -> Iterator[Postgres]:
    data = Path(tempfile.mkdtemp(prefix="it-faults-pg-"))
    server = Postgres(data, int(os.environ.get("PG_TEST_PORT", "25432")))
    server.init()
    try:
        yield server
    finally:
        try:
            server.stop()
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(data, ignore_errors=True)


def test_it_rides_out_a_database_restart_and_sends_nothing_twice(
    kafka_cluster, admin, topics, postgres, fault_row, fault_survived
):
    fault_row["fault"] = "database restarted mid-execution (PostgreSQL)"
    bootstrap = kafka_cluster.bootstrap_servers
    topic, plan_json = worker_topic(admin, topics, bootstrap, "db")
    env = worker_env(postgres.url, lease_seconds=30)
    traffic = Traffic.start(bootstrap, topic, len(ON_ONE_AND_TWO))
    try:
        # Started, and the fault strikes once its first batch is in flight (400 kB/s).
        worker = worker_start_until_in_flight(bootstrap, topic, plan_json, env)
        try:
            stopped = time.monotonic()
            postgres.stop()
            postgres.start()
            try:
                out, _ = worker.communicate(timeout=180)
            except subprocess.TimeoutExpired:
                worker.kill()
                out, _ = worker.communicate()
                tail = out[-6000:]
                raise AssertionError(f"the worker did not finish in 180 s:\n{tail}") from None
            recovered = time.monotonic() - stopped
        finally:
            if worker.poll() is None:
                worker.kill()
        assert worker.returncode == 0 and "FINISHED" in out, out[-3000:]
        report = worker_report(env)
        assert report["state"] == "completed", report
        assert report["runs"] == 1  # the same worker carried on: no resume needed
        assert {state for state, _, _ in report["moves"].values()} == {"done"}
        assert {submissions for _, submissions, _ in report["moves"].values()} == {1}
        assert report["actions"].count("execution.batch_submitted") == 2
        assert report["actions"][-1] == "execution.completed"
        assert "database unavailable" in out  # it did see the restart
        assert not live.in_flight(bootstrap, [topic])
        live.no_throttles_left(admin, [topic])
    finally:
        counts = traffic.finish()
    fault_survived(
        counts,
        recovered=recovered,
        recovery="restart → the plan completed by the same worker",
        said=f"plan completed {recovered:.1f} s after the database restart",
    )
