"""The API's demoted brokers: listed to whoever sees the cluster, undemoted by operators."""

import pytest
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.plans.models import BrokerDemotion

pytestmark = pytest.mark.django_db


@pytest.fixture
def demotion(cluster) -> BrokerDemotion:
    return BrokerDemotion.objects.create(cluster=cluster, node_id=3, demoted_at=timezone.now())


def test_it_lists_demoted_brokers(as_role, demotion):
    rows = as_role("viewer").get("/api/clusters/prod/demoted-brokers/").json()
    assert [(r["node_id"], r["demoted_by"], r["plan_id"]) for r in rows] == [(3, "", None)]
    assert rows[0]["leaders"] >= 0


def test_an_operator_undemotes_a_broker_and_a_viewer_may_not(as_role, demotion):
    refused = as_role("viewer").post("/api/clusters/prod/demoted-brokers/3/undemote/")
    assert refused.status_code == 403 and BrokerDemotion.objects.exists()
    api = as_role("operator")
    done = api.post("/api/clusters/prod/demoted-brokers/3/undemote/", {"reason": "repaired"})
    assert done.status_code == 204 and not BrokerDemotion.objects.exists()
    assert AuditEvent.objects.get(action="broker.undemoted").reason == "repaired"
    again = api.post("/api/clusters/prod/demoted-brokers/3/undemote/")
    assert again.status_code == 400 and "is not demoted" in again.json()["detail"]
