"""A throttle or move cap past its range is a 400 naming it, and changes nothing
(unbounded, 10³⁰ reaches the database as an overflow: a 500)."""

import pytest

from apps.core.bounds import MAX_MOVES_MAX, THROTTLE_BYTES_PER_SEC_MAX
from apps.plans.models import Execution, Plan, PlanState
from tests.security.input_clients import api_as
from tests.support.factories import plan_make

pytestmark = pytest.mark.django_db

HUGE = 10**30


@pytest.mark.parametrize(
    "body",
    [
        {"throttle_bytes_per_sec": HUGE},
        {"throttle_bytes_per_sec": THROTTLE_BYTES_PER_SEC_MAX + 1},
        {"max_moves_per_broker": HUGE},
        {"max_moves_cluster": MAX_MOVES_MAX + 1},
    ],
)
def test_it_refuses_a_tune_past_its_range(cluster, body):
    plan = plan_make(cluster)
    Plan.objects.filter(pk=plan.pk).update(state=PlanState.EXECUTING)
    Execution.objects.create(plan=plan)

    response = api_as("operator").post(f"/api/plans/{plan.pk}/tune/", body, format="json")

    assert response.status_code == 400
    assert list(response.json()) == list(body)
    execution = Execution.objects.get(plan=plan)
    assert execution.throttle_rate is None and execution.max_moves_cluster is None


def test_it_refuses_an_approval_with_a_throttle_past_its_range(cluster):
    plan = plan_make(cluster)

    response = api_as("approver").post(
        f"/api/plans/{plan.pk}/approve/", {"throttle_bytes_per_sec": HUGE}, format="json"
    )

    assert response.status_code == 400
    assert "throttle_bytes_per_sec" in response.json()
    assert Plan.objects.get(pk=plan.pk).state == PlanState.PROPOSED
