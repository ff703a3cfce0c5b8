"""Policies and plans in the Django admin: policy edits are audited, plans are read-only."""

import json

import pytest

from apps.audit.models import AuditEvent
from apps.plans.models import Plan, PlanState
from apps.plans.services import plan_request

pytestmark = pytest.mark.django_db


@pytest.fixture
def plan(orders_cluster, operator) -> Plan:
    return plan_request(cluster=orders_cluster, user=operator, mode="full", reason="skew")


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
    data.update({"dead_broker_grace": "7"})
    for name in ("detection_enabled", "auto_approve_self_healing"):
        if not form.initial.get(name):
            data.pop(name, None)
    data.pop("four_eyes")  # on by default: unticked, it turns off
    response = client.post(f"/admin/plans/clusterpolicy/{policy.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    event = AuditEvent.objects.get(action="policy.changed")
    assert event.after == {"dead_broker_grace": 7, "four_eyes": False}

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
