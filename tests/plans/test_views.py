"""Plan pages: permissions, decisions through the forms, exports, bad input."""

import json

import pytest

from apps.audit.models import AuditEvent
from apps.plans.models import Plan, PlanState
from apps.plans.services import plan_request

pytestmark = pytest.mark.django_db


@pytest.fixture
def plan(cluster, operator) -> Plan:
    return plan_request(cluster=cluster, user=operator, mode="full", reason="skew")


def test_it_requires_login_and_the_view_permission(client, plan, make_user):
    for url in ("/plans/", f"/plans/{plan.pk}/", f"/plans/{plan.pk}/reassignment.json"):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    client.force_login(make_user("nobody"))
    assert client.get("/plans/").status_code == 403
    assert client.get(f"/plans/{plan.pk}/").status_code == 403


def test_it_lists_and_shows_plans_to_viewers_without_decision_forms(client, plan, viewer):
    client.force_login(viewer)
    body = client.get("/plans/?cluster=prod").content.decode()
    assert f'data-plan="{plan.pk}" data-state="proposed"' in body
    assert 'id="request-plan"' not in body
    body = client.get(f"/plans/{plan.pk}/").content.decode()
    assert 'id="approve-form"' not in body and 'id="reject-form"' not in body
    assert client.get("/plans/999999/").status_code == 404
    assert client.get("/plans/?cluster=nope").status_code == 404


def test_it_approves_through_the_form_with_the_client_address(client, plan, approver):
    client.force_login(approver)
    assert 'id="approve-form"' in client.get(f"/plans/{plan.pk}/").content.decode()
    response = client.post(f"/plans/{plan.pk}/approve", {"reason": "ok"}, REMOTE_ADDR="192.0.2.10")
    assert response.status_code == 302
    plan.refresh_from_db()
    assert plan.state == PlanState.APPROVED
    assert AuditEvent.objects.get(action="plan.approved").client_address == "192.0.2.10"


def test_it_refuses_decisions_without_permission_and_changes_nothing(client, plan, viewer):
    client.force_login(viewer)
    response = client.post(f"/plans/{plan.pk}/approve", {})
    assert response.status_code == 403 and b"not allowed" in response.content
    response = client.post(f"/plans/{plan.pk}/reject", {"reason": "no"})
    assert response.status_code == 403
    plan.refresh_from_db()
    assert plan.state == PlanState.PROPOSED


def test_it_needs_a_reason_to_reject_through_the_form(client, plan, approver):
    client.force_login(approver)
    response = client.post(f"/plans/{plan.pk}/reject", {"reason": ""})
    assert response.status_code == 400 and b"reason" in response.content
    plan.refresh_from_db()
    assert plan.state == PlanState.PROPOSED
    response = client.post(f"/plans/{plan.pk}/reject", {"reason": "peak hours"})
    assert response.status_code == 302
    plan.refresh_from_db()
    assert plan.state == PlanState.REJECTED and plan.decision_reason == "peak hours"


def test_it_answers_conflicts_with_409(client, plan, approver):
    client.force_login(approver)
    client.post(f"/plans/{plan.pk}/reject", {"reason": "no"})
    response = client.post(f"/plans/{plan.pk}/approve", {})
    assert response.status_code == 409 and b"rejected" in response.content
    assert client.post("/plans/424242/approve", {}).status_code == 404


def test_it_refuses_get_on_the_decision_urls(client, plan, approver):
    client.force_login(approver)
    assert client.get(f"/plans/{plan.pk}/approve").status_code == 405


def test_it_exports_the_reassignment_and_rollback_json(client, plan, viewer):
    client.force_login(viewer)
    response = client.get(f"/plans/{plan.pk}/reassignment.json")
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content) == plan.reassignment
    assert set(plan.reassignment) == {"version", "partitions"}
    response = client.get(f"/plans/{plan.pk}/rollback.json")
    assert json.loads(response.content) == plan.rollback_reassignment


def test_it_requests_a_plan_through_the_form(client, cluster, operator):
    client.force_login(operator)
    response = client.post(
        "/plans/request", {"cluster": "prod", "mode": "add-brokers", "brokers": "3"}
    )
    assert response.status_code == 302
    plan = Plan.objects.get()
    assert plan.brokers == [3] and plan.requested_by == operator


@pytest.mark.parametrize(
    ("data", "status"),
    [
        ({"cluster": "prod", "mode": "add-brokers", "brokers": "three"}, 400),
        ({"cluster": "prod", "mode": "warp"}, 400),
        ({"cluster": "nope", "mode": "full"}, 404),
        ({"cluster": "prod", "mode": "add-brokers", "brokers": "42"}, 400),
    ],
)
def test_it_refuses_a_malformed_plan_request(client, cluster, operator, data, status):
    client.force_login(operator)
    assert client.post("/plans/request", data).status_code == status
    assert not Plan.objects.exists()


def test_it_refuses_a_plan_request_without_permission(client, cluster, approver):
    client.force_login(approver)
    assert client.post("/plans/request", {"cluster": "prod", "mode": "full"}).status_code == 403
    assert not Plan.objects.exists()


def test_the_admin_edits_policies_with_an_audit_event_and_cannot_edit_plans(
    client, plan, admin_user
):
    from apps.plans.services import policy_get

    policy = policy_get(cluster=plan.cluster)
    client.force_login(admin_user)
    page = client.get(f"/admin/plans/clusterpolicy/{policy.pk}/change/")
    assert page.status_code == 200
    form = page.context["adminform"].form
    data = {}
    for name, field in form.fields.items():
        value = form.initial.get(name, field.initial)
        if isinstance(value, list | dict):
            value = json.dumps(value)
        if value is not None:
            data[name] = value
    data.update({"dead_broker_grace": "7", "four_eyes": "on"})
    for name in ("detection_enabled", "auto_approve_self_healing"):
        if not form.initial.get(name):
            data.pop(name, None)
    response = client.post(f"/admin/plans/clusterpolicy/{policy.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    event = AuditEvent.objects.get(action="policy.changed")
    assert event.after == {"dead_broker_grace": 7, "four_eyes": True}

    data["goals"] = json.dumps(["go-faster"])
    response = client.post(f"/admin/plans/clusterpolicy/{policy.pk}/change/", data)
    assert response.status_code == 200 and b"goals" in response.content
    assert AuditEvent.objects.filter(action="policy.changed").count() == 1

    assert (
        client.post(f"/admin/plans/plan/{plan.pk}/change/", {"state": "approved"}).status_code
        == 403
    )
    plan.refresh_from_db()
    assert plan.state == PlanState.PROPOSED
