"""A real Prometheus (Debian's package, installed by `scripts/bootstrap --tests`) scrapes
/metrics of a live server with its bearer token and can query the balancer's series."""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from devkit.polling import wait_until

from apps.clusters.models import ClusterRound
from tests.support.factories import cluster_make

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

TOKEN = "prometheus-scrape-token"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def prometheus(live_server, settings, tmp_path: Path) -> Iterator[str]:
    binary = shutil.which("prometheus")
    assert binary, "prometheus is missing: scripts/bootstrap --tests installs Debian's package"
    settings.METRICS_TOKEN = TOKEN
    target = live_server.url.removeprefix("http://")
    (tmp_path / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
        "scrape_configs:\n"
        "  - job_name: balancer\n"
        "    metrics_path: /metrics\n"
        f"    authorization: {{credentials: {TOKEN}}}\n"
        f"    static_configs: [{{targets: ['{target}']}}]\n"
    )
    port = _free_port()
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={tmp_path / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "prometheus.log").open("w"),
    )
    url = f"http://127.0.0.1:{port}"
    try:
        # the query API answers 503 until the TSDB has started: wait as a client would
        wait_until(
            lambda: _ready(url, process, tmp_path / "prometheus.log"),
            timeout=60,
            what="Prometheus ready (/-/ready)",
            retry_on=(requests.ConnectionError,),
        )
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def _ready(url: str, process: subprocess.Popen, log: Path) -> bool:
    assert process.poll() is None, f"prometheus exited: {log.read_text()[-2000:]}"
    return requests.get(f"{url}/-/ready", timeout=5).status_code == 200


def _query(prometheus: str, expr: str) -> list[dict]:
    answer = requests.get(f"{prometheus}/api/v1/query", params={"query": expr}, timeout=5)
    answer.raise_for_status()
    return answer.json()["data"]["result"]


def test_a_real_prometheus_scrapes_the_balancers_series(prometheus: str) -> None:
    cluster = cluster_make("prod")
    ClusterRound.objects.create(cluster=cluster, kind="sync", last_seconds=2.5)

    up = wait_until(
        lambda: _query(prometheus, 'up{job="balancer"} == 1'),
        timeout=60,
        what="Prometheus scraping /metrics with its token",
        retry_on=(requests.ConnectionError,),
    )
    rounds = wait_until(
        lambda: _query(prometheus, 'balancer_round_last_duration_seconds{cluster="prod"}'),
        timeout=30,
        what="the round duration series",
    )

    assert len(up) == 1
    assert [(r["metric"]["kind"], float(r["value"][1])) for r in rounds] == [("sync", 2.5)]
    brokers = _query(prometheus, 'sum by (cluster) (balancer_cluster_brokers{alive="true"})')
    assert [(r["metric"]["cluster"], float(r["value"][1])) for r in brokers] == [("prod", 3.0)]
