"""Execution control over the API: pause, resume and tune a running plan; the
throttle chosen at approval; each refused to a viewer (and that refusal audited)."""

import pytest

from apps.audit.models import AuditEvent
from apps.plans.models import Execution, Plan, PlanState

pytestmark = pytest.mark.django_db


@pytest.fixture
def running(plan) -> Plan:
    Plan.objects.filter(pk=plan.pk).update(state=PlanState.EXECUTING)
    Execution.objects.create(plan=plan)
    return plan


def test_it_pauses_tunes_and_resumes_a_running_plan(as_role, running):
    client = as_role("operator")
    url = f"/api/plans/{running.pk}/"

    response = client.post(url + "pause/", {"reason": "peak"}, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["progress"]["paused"] is True
    assert body["actions"]["resume"] and not body["actions"]["pause"]

    response = client.post(
        url + "tune/",
        {"throttle_bytes_per_sec": 2_000_000, "max_moves_cluster": 3},
        format="json",
    )
    assert response.status_code == 200, response.json()
    progress = response.json()["progress"]
    assert progress["throttle_bytes_per_sec"] == 2_000_000 and progress["max_moves_cluster"] == 3

    assert client.post(url + "resume/", {}, format="json").json()["progress"]["paused"] is False
    actions = set(
        AuditEvent.objects.filter(object_id=str(running.pk)).values_list("action", flat=True)
    )
    assert {"execution.paused", "execution.tuned", "execution.resumed"} <= actions


@pytest.mark.parametrize("action", ["pause", "tune"])
def test_it_refuses_and_audits_a_viewers_control(as_role, running, action):
    response = as_role("viewer").post(
        f"/api/plans/{running.pk}/{action}/", {"throttle_bytes_per_sec": 1}, format="json"
    )
    assert response.status_code == 403
    assert AuditEvent.objects.filter(action=f"plan.{action}_refused").exists()
    execution = Execution.objects.get(plan=running)
    assert not execution.paused and execution.throttle_rate is None


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"throttle_bytes_per_sec": -1},
        {"max_moves_per_broker": 0},
        {"throttle_bytes_per_sec": "x"},
    ],
)
def test_it_answers_400_to_a_bad_tune_and_changes_nothing(as_role, running, body):
    response = as_role("operator").post(f"/api/plans/{running.pk}/tune/", body, format="json")
    assert response.status_code == 400
    assert Execution.objects.get(plan=running).throttle_rate is None


def test_it_answers_409_to_pausing_a_proposed_plan(as_role, plan):
    response = as_role("operator").post(f"/api/plans/{plan.pk}/pause/", {}, format="json")
    assert response.status_code == 409


def test_it_approves_with_a_chosen_throttle(as_role, plan, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        response = as_role("approver").post(
            f"/api/plans/{plan.pk}/approve/", {"throttle_bytes_per_sec": 7_000_000}, format="json"
        )
    assert response.status_code == 200, response.json()
    assert response.json()["progress"]["throttle_bytes_per_sec"] == 7_000_000
    assert Execution.objects.get(plan=plan).throttle_rate == 7_000_000
