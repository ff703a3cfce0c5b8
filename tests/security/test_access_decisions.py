"""Four-eyes by default (issue 24, item 3) and execution control bounded by role (item 4)."""

import pytest
from django.contrib.auth.models import User

from apps.access.roles import Role
from apps.audit.models import AuditEvent
from apps.plans.errors import PlanPermissionDenied
from apps.plans.models import Execution, PlanState
from apps.plans.services import (
    execution_pause,
    execution_tune,
    plan_approve,
    plan_cancel,
    plan_request,
)
from tests.support.factories import SKEWED, cluster_apply, cluster_make, user_granted

pytestmark = pytest.mark.django_db


@pytest.fixture
def prod():
    cluster = cluster_make("prod")
    cluster_apply(cluster, SKEWED)
    return cluster


def test_it_refuses_the_requester_their_own_approval_by_default(prod):
    ada = user_granted("ada", Role.ADMIN, prod)
    plan = plan_request(cluster=prod, user=ada, mode="full")
    with pytest.raises(PlanPermissionDenied, match="four-eyes"):
        plan_approve(plan=plan, user=ada)
    plan.refresh_from_db()
    assert plan.state == PlanState.PROPOSED
    plan_approve(plan=plan, user=user_granted("abe", Role.APPROVER, prod))
    assert plan.state == PlanState.APPROVED


def test_it_lets_an_operator_approve_what_the_balancer_proposed(prod):
    """The system is the requester of the periodic balancer's plans: four-eyes holds."""
    plan = plan_request(cluster=prod, user=user_granted("ops", Role.OPERATOR, prod), mode="full")
    plan.requested_by = None  # as the detector makes them
    plan.save(update_fields=["requested_by"])
    plan_approve(plan=plan, user=user_granted("abe", Role.APPROVER, prod))
    assert plan.state == PlanState.APPROVED
    assert not AuditEvent.objects.filter(action="plan.self_approved").exists()


@pytest.fixture
def running(prod):
    """An approved plan with a 1 MB/s throttle and the policy's caps."""
    operator = user_granted("olga", Role.OPERATOR, prod)
    plan = plan_request(cluster=prod, user=operator, mode="full")
    plan_approve(plan=plan, user=user_granted("abe", Role.APPROVER, prod), throttle_rate=1_000_000)
    return plan


def test_it_lets_an_operator_lower_pause_and_cancel_within_the_approved_bounds(running):
    olga = User.objects.get(username="olga")
    execution_tune(plan=running, user=olga, throttle_rate=500_000, max_moves_per_broker=1)
    execution_tune(plan=running, user=olga, throttle_rate=1_000_000)  # back up to the bound
    execution_pause(plan=running, user=olga)
    plan_cancel(plan=running, user=olga, reason="peak")
    assert Execution.objects.get(plan=running).throttle_rate == 1_000_000


@pytest.mark.parametrize(
    "change",
    [{"throttle_rate": 2_000_000}, {"throttle_rate": 0}, {"max_moves_cluster": 10**6}],
    ids=["raise-throttle", "remove-throttle", "raise-cap"],
)
def test_it_refuses_an_operator_anything_beyond_the_approved_bounds(running, change):
    olga = User.objects.get(username="olga")
    with pytest.raises(PlanPermissionDenied, match="approver"):
        execution_tune(plan=running, user=olga, **change)
    execution = Execution.objects.get(plan=running)
    assert execution.throttle_rate == 1_000_000 and execution.max_moves_cluster is None
    assert not AuditEvent.objects.filter(action="execution.tuned", actor="olga").exists()


def test_it_lets_an_approver_raise_the_bounds_operators_then_tune_within(running):
    abe, olga = User.objects.get(username="abe"), User.objects.get(username="olga")
    execution_tune(plan=running, user=abe, throttle_rate=3_000_000)
    execution_tune(plan=running, user=olga, throttle_rate=2_500_000)
    with pytest.raises(PlanPermissionDenied):
        execution_tune(plan=running, user=olga, throttle_rate=3_500_000)
    assert Execution.objects.get(plan=running).throttle_rate == 2_500_000
