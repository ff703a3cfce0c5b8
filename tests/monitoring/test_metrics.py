"""/healthz answers without asking anything; /metrics says the database's figures in
Prometheus' text format, behind METRICS_TOKEN when one is set."""

import pytest
from prometheus_client.parser import text_string_to_metric_families

from apps.clusters.models import ClusterRound
from tests.support.factories import cluster_make, plan_make

pytestmark = pytest.mark.django_db


def _samples(body: str) -> dict[tuple[str, tuple], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(body)
        for s in family.samples
    }


def test_it_answers_liveness(client) -> None:
    response = client.get("/healthz")

    assert response.status_code == 200 and response.content == b"ok\n"


def test_it_says_the_clusters_rounds_and_plans(client) -> None:
    cluster = cluster_make("prod")
    ClusterRound.objects.create(cluster=cluster, kind="sync", last_seconds=1.5, skipped=2)
    plan_make(cluster)

    response = client.get("/metrics")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    got = _samples(response.content.decode())
    prod = ("cluster", "prod")
    assert got[("balancer_cluster_reachable", (prod,))] == 1.0
    assert got[("balancer_cluster_brokers", (("alive", "true"), prod))] == 3
    assert got[("balancer_round_last_duration_seconds", (prod, ("kind", "sync")))] == 1.5
    assert got[("balancer_round_skipped_total", (prod, ("kind", "sync")))] == 2
    assert got[("balancer_plans", (prod, ("state", "proposed")))] == 1
    assert sum(v for (name, _), v in got.items() if name == "balancer_plans_made_total") == 1
    assert got[("balancer_signin_lockouts_total", ())] == 0


def test_it_asks_for_the_token_when_one_is_set(client, settings) -> None:
    settings.METRICS_TOKEN = "scrape-s3cret"

    refused = client.get("/metrics")
    wrong = client.get("/metrics", headers={"Authorization": "Bearer nope"})
    allowed = client.get("/metrics", headers={"Authorization": "Bearer scrape-s3cret"})

    assert refused.status_code == wrong.status_code == 401
    assert b"scrape-s3cret" not in refused.content + wrong.content
    assert allowed.status_code == 200 and b"balancer_signin_lockouts_total" in allowed.content


def test_the_grafana_dashboard_reads_only_series_the_balancer_exports(client) -> None:
    import json
    import re
    from pathlib import Path

    cluster = cluster_make("prod")
    plan = plan_make(cluster)
    plan.state = "executing"
    plan.save(update_fields=["state"])
    families = list(text_string_to_metric_families(client.get("/metrics").content.decode()))
    exported = {f.name for f in families} | {f"{f.name}_total" for f in families}
    dashboard = json.loads(
        (Path(__file__).resolve().parents[2] / "docs" / "grafana-dashboard.json").read_text()
    )
    used = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"\bbalancer_\w+", target["expr"])
    }

    assert len(used) >= 10
    assert used - exported == set()
