"""The cluster page's drained brokers: who drained them and since when, and the
operator's Undrain action (POST with CSRF, audited; refused to viewers)."""

import pytest
from django.test import Client
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.plans.models import BrokerDrain

pytestmark = pytest.mark.django_db


@pytest.fixture
def drain(cluster, operator) -> BrokerDrain:
    return BrokerDrain.objects.create(
        cluster=cluster, node_id=3, drained_at=timezone.now(), drained_by=operator
    )


def test_the_cluster_page_says_who_drained_a_broker_and_offers_undrain(client, drain, operator):
    client.force_login(operator)
    body = client.get("/clusters/prod/").content.decode()
    assert 'data-drained-broker="3"' in body
    assert "Broker 3: drained since" in body and "by olga" in body
    assert 'action="/clusters/prod/brokers/3/undrain/"' in body


def test_a_viewer_sees_the_drain_but_no_undrain_and_may_not_post_it(client, drain, viewer):
    client.force_login(viewer)
    body = client.get("/clusters/prod/").content.decode()
    assert "Broker 3: drained since" in body and "/undrain/" not in body
    assert client.post("/clusters/prod/brokers/3/undrain/").status_code == 403
    assert BrokerDrain.objects.filter(pk=drain.pk).exists()


def test_undrain_needs_a_post_with_its_csrf_token(drain, operator):
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    assert client.get("/clusters/prod/brokers/3/undrain/").status_code == 405
    assert client.post("/clusters/prod/brokers/3/undrain/").status_code == 403
    assert BrokerDrain.objects.filter(pk=drain.pk).exists()


def test_an_operator_undrains_a_broker(client, drain, operator):
    client.force_login(operator)
    response = client.post("/clusters/prod/brokers/3/undrain/", {"reason": "repaired"})
    assert response.status_code == 302 and response["Location"] == "/clusters/prod/"
    assert not BrokerDrain.objects.exists()
    event = AuditEvent.objects.get(action="broker.undrained")
    assert event.actor == "olga" and event.reason == "repaired"
    body = client.get("/clusters/prod/").content.decode()
    assert "Broker 3 undrained" in body and "drained since" not in body


def test_undraining_a_broker_that_is_not_drained_says_so(client, cluster, operator):
    client.force_login(operator)
    client.post("/clusters/prod/brokers/2/undrain/")
    body = client.get("/clusters/prod/").content.decode()
    assert "broker 2 of prod is not drained" in body
    assert not AuditEvent.objects.filter(action="broker.undrained").exists()
