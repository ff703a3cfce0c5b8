"""The fault matrix: each case records its row (fault, survived, time to recover,
records acked / read / lost) in FAULTS_RESULTS; `bench/faults_table.py` renders
docs/faults.md's table from it.

The dev cluster and Redis are the session's (tests/conftest.py): started once, shared
by every case. A row is written even when its case fails (survived: no).
"""

import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# Shared fixtures: the live plan tests' admin client and throwaway topics, the browser
# tests' headless Chromium and signed-in pages.
from tests.browser.conftest import browser, sign_in  # noqa: F401
from tests.plans.conftest import admin, topics  # noqa: F401

REPO = Path(__file__).resolve().parents[2]
RESULTS = Path(os.environ.get("FAULTS_RESULTS", REPO / ".run" / "faults" / "results.json"))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.fault_passed = report.passed
    return report


def results_write(row: dict) -> None:
    """Add or replace this fault's row in the results file.

    Two pytest processes write rows at once in `make test` (the `own_stack` tests run
    beside the others): the read-modify-write holds a lock file, and the new file
    replaces the old one whole, so no reader sees half of it."""
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with open(RESULTS.with_name(RESULTS.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        rows = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        rows[row["fault"]] = row
        fresh = RESULTS.with_name(f"{RESULTS.name}.{os.getpid()}")
        fresh.write_text(json.dumps(rows, indent=2, sort_keys=True) + "\n")
        fresh.replace(RESULTS)


@pytest.fixture
def fault_row(request) -> Iterator[dict]:
    """The case's row: the test sets `fault`, `recover_s`, `acked`, `read`, `lost`."""
    row: dict = {"fault": request.node.name, "test": request.node.nodeid}
    yield row
    row["survived"] = bool(getattr(request.node, "fault_passed", False))
    results_write(row)


@pytest.fixture
def fault_survived(fault_row, capsys):
    """survived(counts, recovered=s, recovery=..., said=..., **more): the case's row (its
    traffic counts, the seconds to recover, how, and any other field), what happened
    printed, and the check every case makes: no acked record lost."""

    def survived(counts: dict[str, int], *, recovered: float, said: str, **how) -> None:
        fault_row.update(counts, recover_s=round(recovered, 1), **how)
        with capsys.disabled():
            print(f"\n{said}; traffic: {counts}")
        assert counts["lost"] == 0 and counts["acked"] > 0

    return survived


@pytest.fixture
def side_traffic(kafka_cluster) -> Iterator:
    """acks=all traffic on a topic of its own, for the faults that don't touch Kafka:
    the case calls `.finish()` for its counts; the topic is deleted afterwards."""
    from devkit import live

    from apps.kafka_layer.clients import admin_client_create
    from tests.faults.traffic import Traffic

    client = admin_client_create(bootstrap_servers=kafka_cluster.bootstrap_servers)
    topic = live.topic_name("side")
    live.topic_create(client, topic, partitions=6, rf=2)
    traffic = Traffic.start(kafka_cluster.bootstrap_servers, topic, 6)
    yield traffic
    if not traffic.producer.stopped:
        traffic.finish()
    live.topics_delete(client, [topic])
