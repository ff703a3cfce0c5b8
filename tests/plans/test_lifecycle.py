"""Plan lifecycle on the database: request, supersede, approve, reject, four-eyes,
stale, data loss, auto-approval, rollback, policy changes. Kafka is not involved."""

import json

import pytest
from django.contrib.auth.models import Group

from apps.audit.models import AuditEvent
from apps.clusters.models import Cluster
from apps.plans.errors import PlanPermissionDenied, PlanRequestInvalid, PlanStale, PlanStateError
from apps.plans.models import ClusterPolicy, Plan, PlanMode, PlanOrigin, PlanState
from apps.plans.selectors import assignment_fingerprint, plan_export_json
from apps.plans.services import (
    plan_approve,
    plan_cancel,
    plan_reject,
    plan_request,
    plan_rollback_request,
    policy_get,
    policy_update,
)
from tests.plans.conftest import SKEWED
from tests.support.factories import cluster_apply, plan_from_assignment, policy_set

pytestmark = pytest.mark.django_db


def actions(plan: Plan) -> list[str]:
    return list(
        AuditEvent.objects.filter(object_type="plans.plan", object_id=str(plan.pk))
        .order_by("id")
        .values_list("action", flat=True)
    )


def test_it_creates_the_four_groups_with_their_permissions():
    perms = {
        g.name: {p.codename for p in g.permissions.all()}
        for g in Group.objects.filter(name__in=["viewer", "operator", "approver", "admin"])
    }
    assert "view_plan" in perms["viewer"] and "approve_plan" not in perms["viewer"]
    assert {"request_plan", "cancel_plan"} <= perms["operator"]
    assert "approve_plan" not in perms["operator"]
    assert {"approve_plan", "reject_plan"} <= perms["approver"]
    assert "request_plan" not in perms["approver"]
    assert "approve_data_loss" in perms["admin"] and "approve_data_loss" not in perms["approver"]


def test_it_proposes_a_plan_by_hand_with_moves_fingerprint_and_rollback(orders_cluster, operator):
    plan = plan_request(cluster=orders_cluster, user=operator, mode="full", reason="even out")

    assert plan.state == PlanState.PROPOSED and plan.origin == PlanOrigin.OPERATOR
    assert plan.requested_by == operator and plan.request_reason == "even out"
    entries = plan.reassignment["partitions"]
    assert entries and set(plan.reassignment) == {"version", "partitions"}
    # Broker 3 was empty: the plan gives it replicas.
    assert any(3 in e["replicas"] for e in entries)
    moves = {(m.topic, m.partition): m for m in plan.moves.all()}
    assert len(moves) == len(entries)
    for e in entries:
        key = (e["topic"], e["partition"])
        assert moves[key].replicas_before == SKEWED[key]
        assert moves[key].replicas_after == e["replicas"]
    assert plan.rollback_reassignment["partitions"] == [
        {
            "topic": e["topic"],
            "partition": e["partition"],
            "replicas": SKEWED[(e["topic"], e["partition"])],
        }
        for e in entries
    ]
    keys = [(e["topic"], e["partition"]) for e in entries]
    assert plan.fingerprint == assignment_fingerprint(assignment={k: SKEWED[k] for k in keys})
    assert json.loads(plan_export_json(plan=plan)) == plan.reassignment
    assert actions(plan) == ["plan.proposed"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "sideways"}, "unknown mode"),
        ({"mode": "add-brokers", "brokers": [9]}, "broker 9 is not part"),
        ({"mode": "add-brokers", "brokers": ["x"]}, "integers"),
        ({"mode": "add-brokers"}, "needs the broker ids"),
        ({"mode": "leaders", "allow_data_loss": True}, "data loss"),
    ],
)
def test_it_refuses_a_malformed_request_and_changes_nothing(
    orders_cluster, operator, kwargs, message
):
    events = AuditEvent.objects.count()
    with pytest.raises(PlanRequestInvalid, match=message):
        plan_request(cluster=orders_cluster, user=operator, **kwargs)
    assert Plan.objects.count() == 0 and AuditEvent.objects.count() == events


def test_it_refuses_requests_and_decisions_without_permission(
    orders_cluster, viewer, approver, operator
):
    with pytest.raises(PlanPermissionDenied):
        plan_request(cluster=orders_cluster, user=viewer, mode="full")
    with pytest.raises(PlanPermissionDenied):
        plan_request(cluster=orders_cluster, user=approver, mode="full")
    plan = plan_request(cluster=orders_cluster, user=operator, mode="full")
    for user in (viewer, operator):
        with pytest.raises(PlanPermissionDenied):
            plan_approve(plan=plan, user=user)
        with pytest.raises(PlanPermissionDenied):
            plan_reject(plan=plan, user=user, reason="no")
    plan.refresh_from_db()
    assert plan.state == PlanState.PROPOSED and actions(plan) == ["plan.proposed"]


def test_it_says_when_there_is_nothing_to_change(orders_cluster, operator):
    balanced = {("orders", i): [[1, 2], [2, 3], [3, 1]][i % 3] for i in range(6)}
    cluster_apply(orders_cluster, balanced)
    with pytest.raises(PlanRequestInvalid, match="nothing to change"):
        plan_request(cluster=orders_cluster, user=operator, mode="leaders")


def test_it_keeps_one_open_proposal_per_cluster(orders_cluster, operator):
    first = plan_request(cluster=orders_cluster, user=operator, mode="full")
    second = plan_request(cluster=orders_cluster, user=operator, mode="add-brokers", brokers=[3])

    first.refresh_from_db()
    assert first.state == PlanState.SUPERSEDED and first.superseded_by_id == second.pk
    assert Plan.objects.filter(cluster=orders_cluster, state=PlanState.PROPOSED).get() == second
    assert actions(first) == ["plan.proposed", "plan.superseded"]


def test_it_keeps_an_approval_made_while_the_task_queue_is_down_and_says_who_starts_it(
    orders_cluster, operator, approver, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    from celery import current_app
    from kombu.exceptions import OperationalError

    from apps.plans.executor import executions_resume
    from apps.plans.queue import PLAN_EXECUTE_TASK

    def queue_down(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(current_app.tasks[PLAN_EXECUTE_TASK], "delay", queue_down)
    plan = plan_request(cluster=orders_cluster, user=operator, mode="full")

    with django_capture_on_commit_callbacks(execute=True):
        plan_approve(plan=plan, user=approver)

    plan.refresh_from_db()
    assert plan.state == PlanState.APPROVED
    assert f"plan {plan.pk}: execution not enqueued" in caplog.text
    assert "Connection refused" in caplog.text and "resume sweep" in caplog.text
    assert executions_resume() == [plan.pk]  # the sweep's next round enqueues it


def test_it_approves_and_records_who_why_and_from_where(orders_cluster, operator, approver):
    plan = plan_request(cluster=orders_cluster, user=operator, mode="full")
    plan_approve(plan=plan, user=approver, reason="looks right", client_address="10.9.8.7")

    plan.refresh_from_db()
    assert plan.state == PlanState.APPROVED and plan.decided_by == approver
    assert not plan.decided_by_policy
    event = AuditEvent.objects.get(action="plan.approved")
    assert (event.actor, event.reason, event.client_address) == ("anna", "looks right", "10.9.8.7")
    assert event.before["state"] == "proposed" and event.after["state"] == "approved"


def test_it_refuses_illegal_transitions(orders_cluster, operator, approver):
    plan = plan_request(cluster=orders_cluster, user=operator, mode="full")
    plan_reject(plan=plan, user=approver, reason="not now")
    with pytest.raises(PlanStateError):
        plan_approve(plan=plan, user=approver)
    with pytest.raises(PlanStateError):
        plan_reject(plan=plan, user=approver, reason="again")
    with pytest.raises(PlanStateError):
        plan_cancel(plan=plan, user=approver)
    with pytest.raises(PlanStateError):
        plan_rollback_request(plan=plan, user=operator)
    plan.refresh_from_db()
    assert plan.state == PlanState.REJECTED and plan.decision_reason == "not now"


def test_it_needs_a_reason_to_reject(orders_cluster, operator, approver):
    plan = plan_request(cluster=orders_cluster, user=operator, mode="full")
    with pytest.raises(PlanRequestInvalid, match="reason"):
        plan_reject(plan=plan, user=approver, reason="   ")
    plan.refresh_from_db()
    assert plan.state == PlanState.PROPOSED


def test_it_applies_the_four_eyes_rule_by_default(orders_cluster, admin_member, approver):
    plan = plan_request(cluster=orders_cluster, user=admin_member, mode="full")

    with pytest.raises(PlanPermissionDenied, match="four-eyes"):
        plan_approve(plan=plan, user=admin_member)
    plan.refresh_from_db()
    assert plan.state == PlanState.PROPOSED
    plan_approve(plan=plan, user=approver)
    assert plan.state == PlanState.APPROVED


def test_it_lets_the_requester_approve_without_four_eyes_and_says_so(
    orders_cluster, admin_member, client
):
    policy_set(orders_cluster, admin_member, four_eyes=False)
    plan = plan_request(cluster=orders_cluster, user=admin_member, mode="full")
    plan_approve(plan=plan, user=admin_member)
    assert plan.state == PlanState.APPROVED
    turned_off = AuditEvent.objects.get(action="policy.changed")
    assert turned_off.after == {"four_eyes": False} and turned_off.cluster_id == orders_cluster.pk
    assert AuditEvent.objects.filter(action="plan.self_approved", object_id=str(plan.pk)).exists()
    client.force_login(admin_member)
    page = client.get(f"/clusters/{orders_cluster.name}/plans/{plan.pk}/").content.decode()
    assert 'id="plan-self-approved"' in page


def test_it_turns_a_plan_stale_when_the_cluster_moved_on(orders_cluster, operator, approver):
    plan = plan_request(cluster=orders_cluster, user=operator, mode="full")
    moved = dict(SKEWED)
    key = (plan.moves.first().topic, plan.moves.first().partition)
    moved[key] = list(reversed(SKEWED[key]))
    cluster_apply(orders_cluster, moved)

    with pytest.raises(PlanStale):
        plan_approve(plan=plan, user=approver)
    plan.refresh_from_db()
    assert plan.state == PlanState.STALE
    with pytest.raises(PlanStateError):
        plan_approve(plan=plan, user=approver)


def _lossy_plan(cluster: Cluster, user) -> Plan:
    return plan_from_assignment(
        cluster,
        {("orders", 0): [3, 1]},
        {("orders", 0): [1, 2]},
        actor=user,
        mode=PlanMode.FIX_OFFLINE,
        data_loss_partitions=["orders-0"],
        requested_by=user,
    )


def test_it_needs_a_separate_confirmation_and_permission_to_lose_data(
    orders_cluster, admin_member, approver
):
    # One admin requests and approves here: four-eyes is off, data loss is the point.
    policy_set(orders_cluster, admin_member, four_eyes=False)
    plan = _lossy_plan(orders_cluster, admin_member)
    with pytest.raises(PlanPermissionDenied):
        plan_approve(plan=plan, user=approver, confirm_data_loss=True)
    with pytest.raises(PlanRequestInvalid, match="confirm"):
        plan_approve(plan=plan, user=admin_member)
    plan.refresh_from_db()
    assert plan.state == PlanState.PROPOSED

    plan_approve(plan=plan, user=admin_member, confirm_data_loss=True, reason="topic is scratch")
    assert plan.state == PlanState.APPROVED and plan.data_loss_confirmed_by == admin_member
    assert "plan.data_loss_confirmed" in actions(plan)


def _detected_move(cluster: Cluster, index: int, before, after, *, sizes_known, size=None):
    """A detector's plan moving orders-`index` from `before` to `after`."""
    key = ("orders", index)
    return plan_from_assignment(
        cluster,
        {key: after},
        {key: before},
        actor=None,
        origin=PlanOrigin.DETECTOR,
        report={"sizes_known": sizes_known},
        **({} if size is None else {"sizes": {key: size}}),
    )


def test_it_never_auto_approves_data_loss(orders_cluster, admin_member):
    policy_set(
        orders_cluster,
        admin_member,
        auto_approve_self_healing=True,
        auto_approve_max_bytes=10**12,
    )
    plan = _lossy_plan(orders_cluster, admin_member)
    assert plan.state == PlanState.PROPOSED


def test_it_auto_approves_small_plans_as_the_policy(orders_cluster, admin_member):
    policy_set(orders_cluster, admin_member, auto_approve_max_bytes=1000)
    plan = _detected_move(orders_cluster, 0, [1, 2], [3, 2], sizes_known=True, size=500)
    plan.refresh_from_db()
    assert plan.state == PlanState.APPROVED and plan.decided_by_policy
    event = AuditEvent.objects.get(action="plan.approved")
    assert event.actor_kind == "policy" and event.actor == "policy:prod"
    assert "500 bytes" in event.reason

    big = _detected_move(orders_cluster, 1, [2, 1], [3, 1], sizes_known=True, size=5000)
    assert big.state == PlanState.PROPOSED


def test_it_does_not_trust_unknown_sizes_for_auto_approval(orders_cluster, admin_member):
    policy_set(orders_cluster, admin_member, auto_approve_max_bytes=1000)
    plan = _detected_move(orders_cluster, 0, [1, 2], [3, 2], sizes_known=False)
    assert plan.state == PlanState.PROPOSED


def test_it_cancels_an_approved_plan_before_it_starts(orders_cluster, operator, approver):
    plan = plan_request(cluster=orders_cluster, user=operator, mode="full")
    plan_approve(plan=plan, user=approver)
    plan_cancel(plan=plan, user=operator, reason="maintenance window over")
    plan.refresh_from_db()
    assert plan.state == PlanState.CANCELLED
    assert actions(plan)[-1] == "plan.cancelled"


def test_it_proposes_a_rollback_of_a_completed_plan(orders_cluster, operator, approver):
    plan = plan_request(cluster=orders_cluster, user=operator, mode="full")
    Plan.objects.filter(pk=plan.pk).update(state=PlanState.COMPLETED)
    plan.refresh_from_db()
    after = dict(SKEWED)
    for e in plan.reassignment["partitions"]:
        after[(e["topic"], e["partition"])] = e["replicas"]
    cluster_apply(orders_cluster, after)

    rollback = plan_rollback_request(plan=plan, user=operator, reason="latency went up")

    assert rollback.state == PlanState.PROPOSED and rollback.rollback_of == plan
    assert rollback.mode == PlanMode.ROLLBACK
    assert rollback.reassignment == plan.rollback_reassignment
    assert rollback.rollback_reassignment == plan.reassignment
    assert actions(plan)[-1] == "plan.rollback_requested"
    assert actions(rollback) == ["plan.proposed"]
    plan_approve(plan=rollback, user=approver)
    assert rollback.state == PlanState.APPROVED


def test_it_refuses_a_rollback_onto_a_dead_broker(orders_cluster, operator):
    plan = plan_request(cluster=orders_cluster, user=operator, mode="full")
    Plan.objects.filter(pk=plan.pk).update(state=PlanState.COMPLETED)
    plan.refresh_from_db()
    cluster_apply(orders_cluster, SKEWED, alive=(2, 3))
    with pytest.raises(PlanRequestInvalid, match="not alive"):
        plan_rollback_request(plan=plan, user=operator)


def test_it_audits_policy_changes_and_refuses_bad_values(orders_cluster, admin_member, operator):
    policy = policy_get(cluster=orders_cluster)
    with pytest.raises(PlanPermissionDenied):
        policy_update(policy=policy, actor=operator, changes={"four_eyes": True})
    for bad in (
        {"balance_threshold": 0.5},
        {"goals": ["make-it-fast"]},
        {"excluded_brokers": ["one"]},
        {"nonsense": 1},
        {"goal_thresholds": {"leader-distribution": 0.2}},
    ):
        with pytest.raises(PlanRequestInvalid):
            policy_update(policy=policy, actor=admin_member, changes=bad)
    assert not AuditEvent.objects.filter(action="policy.changed").exists()

    policy_update(
        policy=policy, actor=admin_member, changes={"dead_broker_grace": 5, "four_eyes": False}
    )
    event = AuditEvent.objects.get(action="policy.changed")
    assert event.before == {"dead_broker_grace": 60, "four_eyes": True}
    assert event.after == {"dead_broker_grace": 5, "four_eyes": False}
    assert ClusterPolicy.objects.get(cluster=orders_cluster).dead_broker_grace == 5


def test_it_drains_brokers_before_decommission(orders_cluster, operator):
    balanced = {("orders", i): [[1, 2], [2, 3], [3, 1]][i % 3] for i in range(6)}
    cluster_apply(orders_cluster, balanced)
    plan = plan_request(cluster=orders_cluster, user=operator, mode="remove-brokers", brokers=[1])
    after = {(m.topic, m.partition): m.replicas_after for m in plan.moves.all()}
    for key, replicas in balanced.items():
        assert 1 not in after.get(key, replicas)
    assert plan.brokers == [1] and plan.mode == PlanMode.REMOVE_BROKERS


def test_it_plans_leadership_only_without_copying_data(orders_cluster, operator):
    cluster_apply(orders_cluster, {("orders", i): [1, 2] for i in range(6)})
    plan = plan_request(cluster=orders_cluster, user=operator, mode="leaders")
    moves = list(plan.moves.all())
    assert moves and all(m.leader_only for m in moves)
    assert plan.bytes_to_move == 0


def test_it_enqueues_the_execution_once_approved(
    orders_cluster, operator, approver, django_capture_on_commit_callbacks, monkeypatch
):
    from apps.plans import tasks

    sent = []
    monkeypatch.setattr(tasks.plan_execute_task, "delay", lambda plan_id: sent.append(plan_id))
    plan = plan_request(cluster=orders_cluster, user=operator, mode="full")
    with django_capture_on_commit_callbacks(execute=True):
        pass
    assert sent == []  # proposing runs nothing
    with django_capture_on_commit_callbacks(execute=True):
        plan_approve(plan=plan, user=approver)
    assert sent == [plan.pk]


def test_the_command_requests_a_plan_and_refuses_bad_input(orders_cluster, operator, viewer):
    import io

    from django.core.management import CommandError, call_command

    out = io.StringIO()
    call_command(
        "request_plan",
        "--cluster",
        "prod",
        "--user",
        "olga",
        "--mode",
        "add-brokers",
        "--brokers",
        "3",
        stdout=out,
    )
    plan = Plan.objects.get()
    assert f"plan #{plan.pk} proposed" in out.getvalue()
    assert json.loads(out.getvalue().splitlines()[-1]) == plan.reassignment
    for args, message in (
        (["--cluster", "nope", "--user", "olga"], "no cluster"),
        (["--cluster", "prod", "--user", "nobody"], "no user"),
        (["--cluster", "prod", "--user", "olga", "--brokers", "x"], "integers"),
        (["--cluster", "prod", "--user", "vic"], "not allowed"),
    ):
        with pytest.raises(CommandError, match=message):
            call_command("request_plan", *args)
    assert Plan.objects.count() == 1
