"""Broker ids are Kafka's int32: past that a query or body is a 400 naming the field
and a path a 404 (unbounded, 10³⁰ overflows the query: a 500)."""

import pytest
from devkit.users import user_make

from apps.plans.models import Plan
from tests.security.input_clients import api_as
from tests.support.factories import plan_make

pytestmark = pytest.mark.django_db

HUGE = 10**30


def test_it_answers_404_to_a_huge_broker_id_in_a_path(client, cluster):
    url = f"/api/clusters/prod/drained-brokers/{HUGE}/undrain/"
    assert api_as("admin").post(url, {}, format="json").status_code == 404
    client.force_login(user_make("page-admin", "admin"))
    assert client.post(f"/clusters/prod/brokers/{HUGE}/undrain/").status_code == 404


def test_it_refuses_a_huge_broker_filter(cluster):
    plan = plan_make(cluster)
    viewer = api_as("viewer")

    for url in ("/api/clusters/prod/partitions/", f"/api/plans/{plan.pk}/moves/"):
        response = viewer.get(url, {"broker": HUGE})
        assert response.status_code == 400 and "broker" in response.json(), url


def test_it_refuses_a_plan_request_for_a_huge_broker(cluster):
    before = Plan.objects.count()

    response = api_as("operator").post(
        "/api/clusters/prod/plans/",
        {"mode": "remove-brokers", "brokers": [HUGE]},
        format="json",
    )

    assert response.status_code == 400 and "brokers" in response.json()
    assert Plan.objects.count() == before


def test_it_refuses_a_what_if_with_a_huge_broker(cluster):
    response = api_as("viewer").post(
        "/api/clusters/prod/what-if/", {"add_brokers": [{"id": HUGE}]}, format="json"
    )

    assert response.status_code == 400 and "add_brokers" in response.json()
