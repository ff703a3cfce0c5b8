"""Operator control of a running execution: pause (no new batch; what is in flight
finishes), resume, and change its throttle and concurrency while it runs.

Each change is a row on the execution, written with its audit event in one
transaction; the executor applies it on its next step (Kafka is never called from
the request path). A change of throttle or caps re-estimates the rest of the copy in
the same transaction (from the database: what is left, today's write rates), and the
audit row says the copy time before and after. Whoever may cancel an execution may
control it.
"""

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from apps.core.bounds import MAX_MOVES_MAX, THROTTLE_BYTES_PER_SEC_MAX

from ..actions import ExecutionAction
from ..errors import PlanPermissionDenied, PlanRequestInvalid, PlanStateError
from ..models import ACTIVE_STATES, Execution, Plan
from .estimate import plan_reestimate_remaining
from .permissions import permission_require
from .plan_audit import plan_audit_record
from .policy import policy_get

CONTROL_PERMISSION = "plans.cancel_plan"
RAISE_PERMISSION = "plans.approve_plan"
TUNABLE = ("throttle_rate", "max_moves_per_broker", "max_moves_cluster")


def execution_bounds(*, plan: Plan, execution: Execution) -> dict[str, int]:
    """The throttle (0: none) and caps an approver allowed this run: set at approval or
    by an approver's tuning, else the policy's."""
    policy = policy_get(cluster=plan.cluster)
    defaults = {
        "throttle_rate": policy.throttle_bytes_per_sec,
        "max_moves_per_broker": policy.max_moves_per_broker,
        "max_moves_cluster": policy.max_moves_cluster,
    }
    return {
        key: value if (value := getattr(execution, f"approved_{key}")) is not None else default
        for key, default in defaults.items()
    }


def _above_bounds(changes: dict[str, int], bounds: dict[str, int]) -> list[str]:
    """What in `changes` goes beyond `bounds`, said for the refusal."""
    beyond = []
    throttle = changes.get("throttle_rate")
    if throttle is not None and bounds["throttle_rate"] > 0:
        if throttle == 0:
            beyond.append("removing the throttle")
        elif throttle > bounds["throttle_rate"]:
            beyond.append(f"a throttle above the approved {bounds['throttle_rate']} B/s")
    for key in ("max_moves_per_broker", "max_moves_cluster"):
        if key in changes and changes[key] > bounds[key]:
            beyond.append(f"{key.replace('_', ' ')} above the approved {bounds[key]}")
    return beyond


def _execution_locked(*, plan: Plan, what: str) -> Execution:
    """The plan's execution row, locked; refuses a plan that is not approved or running."""
    plan.refresh_from_db()
    if plan.state not in ACTIVE_STATES:
        raise PlanStateError(f"plan #{plan.pk} is {plan.state}; only a running plan can {what}")
    execution, _ = Execution.objects.get_or_create(plan=plan)
    execution = Execution.objects.select_for_update().get(pk=execution.pk)
    if execution.cancel_requested:
        raise PlanStateError(f"plan #{plan.pk} is being cancelled")
    return execution


def _paused_set(
    *,
    plan: Plan,
    user: AbstractBaseUser,
    paused: bool,
    reason: str,
    client_address: str | None,
) -> Plan:
    verb = "be paused" if paused else "be resumed"
    permission_require(
        user=user, perm=CONTROL_PERMISSION, what="pause or resume executions", cluster=plan.cluster
    )
    with transaction.atomic():
        execution = _execution_locked(plan=plan, what=verb)
        if execution.paused == paused:
            raise PlanStateError(f"plan #{plan.pk} is already {'paused' if paused else 'running'}")
        execution.paused = paused
        execution.save(update_fields=["paused", "updated_at"])
        plan_audit_record(
            actor=user,
            action=ExecutionAction.PAUSED if paused else ExecutionAction.RESUMED,
            plan=plan,
            before={"paused": not paused},
            after={"paused": paused},
            reason=reason,
            client_address=client_address,
        )
    return plan


def execution_pause(
    *, plan: Plan, user: AbstractBaseUser, reason: str = "", client_address: str | None = None
) -> Plan:
    """No new batch is sent until resumed; moves in flight finish."""
    return _paused_set(
        plan=plan, user=user, paused=True, reason=reason, client_address=client_address
    )


def execution_resume(
    *, plan: Plan, user: AbstractBaseUser, reason: str = "", client_address: str | None = None
) -> Plan:
    return _paused_set(
        plan=plan, user=user, paused=False, reason=reason, client_address=client_address
    )


def execution_tune(
    *,
    plan: Plan,
    user: AbstractBaseUser,
    throttle_rate: int | None = None,
    max_moves_per_broker: int | None = None,
    max_moves_cluster: int | None = None,
    reason: str = "",
    client_address: str | None = None,
) -> Plan:
    """Change the replication throttle (bytes/s, 0: none) or the move caps of a running
    plan; values not given stay as they are."""
    permission_require(
        user=user, perm=CONTROL_PERMISSION, what="change a running execution", cluster=plan.cluster
    )
    wanted = {
        "throttle_rate": throttle_rate,
        "max_moves_per_broker": max_moves_per_broker,
        "max_moves_cluster": max_moves_cluster,
    }
    changes = {k: v for k, v in wanted.items() if v is not None}
    if not changes:
        raise PlanRequestInvalid("give a throttle or a move cap to change")
    if not 0 <= changes.get("throttle_rate", 0) <= THROTTLE_BYTES_PER_SEC_MAX:
        raise PlanRequestInvalid(
            f"the throttle is a number of bytes per second, 0 to {THROTTLE_BYTES_PER_SEC_MAX}"
        )
    for key in ("max_moves_per_broker", "max_moves_cluster"):
        if key in changes and not 1 <= changes[key] <= MAX_MOVES_MAX:
            raise PlanRequestInvalid(f"{key.replace('_', ' ')} must be 1 to {MAX_MOVES_MAX}")
    approver = user.has_perm(RAISE_PERMISSION, plan)
    with transaction.atomic():
        execution = _execution_locked(plan=plan, what="be changed")
        beyond = _above_bounds(changes, execution_bounds(plan=plan, execution=execution))
        if beyond and not approver:
            raise PlanPermissionDenied(
                f"you are not allowed to go beyond what the approver set: {'; '.join(beyond)} "
                "takes an approver"
            )
        before: dict[str, Any] = {k: getattr(execution, k) for k in changes}
        before |= {"duration_estimate_seconds": plan.duration_estimate_seconds}
        for key, value in changes.items():
            setattr(execution, key, value)
        # an operator's own throttle ends the adaptive one
        auto_off = "throttle_rate" in changes and execution.throttle_auto
        if auto_off:
            execution.throttle_auto = False
            before["throttle_auto"] = True
        # An approver's values are the bounds operators tune within from now on.
        bounds = {f"approved_{k}": v for k, v in changes.items()} if approver else {}
        for key, value in bounds.items():
            setattr(execution, key, value)
        auto = ["throttle_auto"] if auto_off else []
        execution.save(update_fields=[*changes, *bounds, *auto, "updated_at"])
        # Re-estimated at once: the page's copy time and ETA follow the new setting.
        copy = plan_reestimate_remaining(plan=plan, execution=execution)
        plan_audit_record(
            actor=user,
            action=ExecutionAction.TUNED,
            plan=plan,
            before=before,
            after=changes
            | ({"throttle_auto": False} if auto_off else {})
            | {
                "duration_estimate_seconds": plan.duration_estimate_seconds,
                "eta_seconds": copy.seconds,
                "bytes_to_move": plan.bytes_to_move,
            },
            reason=reason,
            client_address=client_address,
        )
    return plan
