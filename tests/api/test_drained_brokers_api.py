"""The API's drained brokers: listed to whoever sees the cluster, undrained by operators."""

import pytest
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.plans.models import BrokerDrain

pytestmark = pytest.mark.django_db


@pytest.fixture
def drain(cluster) -> BrokerDrain:
    return BrokerDrain.objects.create(cluster=cluster, node_id=3, drained_at=timezone.now())


def test_it_lists_drained_brokers(as_role, drain):
    # The factory cluster holds 2 replicas on broker 3 (placed there after the drain).
    rows = as_role("viewer").get("/api/clusters/prod/drained-brokers/").json()
    assert [(r["node_id"], r["drained_by"], r["replicas"]) for r in rows] == [(3, "", 2)]


def test_an_operator_undrains_a_broker_and_a_viewer_may_not(as_role, drain):
    refused = as_role("viewer").post("/api/clusters/prod/drained-brokers/3/undrain/")
    assert refused.status_code == 403 and BrokerDrain.objects.exists()
    api = as_role("operator")
    done = api.post("/api/clusters/prod/drained-brokers/3/undrain/", {"reason": "back"})
    assert done.status_code == 204 and not BrokerDrain.objects.exists()
    assert AuditEvent.objects.get(action="broker.undrained").reason == "back"
    again = api.post("/api/clusters/prod/drained-brokers/3/undrain/")
    assert again.status_code == 400 and "is not drained" in again.json()["detail"]
