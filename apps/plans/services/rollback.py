"""Rollback: a new proposal that puts a completed plan's partitions back where it
found them, approved and executed like any other."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from ..actions import PlanAction
from ..errors import PlanRequestInvalid, PlanStateError
from ..models import Plan, PlanMode, PlanOrigin, PlanState
from ..selectors import assignment_current
from .creation import plan_create
from .permissions import permission_require
from .plan_audit import plan_audit_record


def plan_rollback_request(
    *, plan: Plan, user: AbstractBaseUser, reason: str = "", client_address: str | None = None
) -> Plan:
    """A new proposal that puts a completed plan's partitions back where they started."""
    permission_require(
        user=user, perm="plans.request_plan", what="request a rollback", cluster=plan.cluster
    )
    if plan.state != PlanState.COMPLETED:
        raise PlanStateError(f"plan #{plan.pk} is {plan.state}; only a completed plan rolls back")
    rolled = plan.rollback_reassignment.get("partitions", [])
    targets = {(e["topic"], e["partition"]): list(e["replicas"]) for e in rolled}
    # the dirs the replicas the plan moved between dirs go back to (JBOD)
    dirs = {(e["topic"], e["partition"]): e["log_dirs"] for e in rolled if "log_dirs" in e}
    current = assignment_current(cluster=plan.cluster, keys=targets)
    missing = [f"{t}-{p}" for (t, p), r in current.items() if not r]
    if missing:
        raise PlanRequestInvalid(f"can't roll back: partition {missing[0]} no longer exists")
    alive = set(plan.cluster.brokers.filter(alive=True).values_list("node_id", flat=True))
    for key, replicas in targets.items():
        dead = [b for b in replicas if b not in alive]
        if dead:
            raise PlanRequestInvalid(
                f"can't roll back: {key[0]}-{key[1]} would go back to broker {dead[0]}, "
                "which is not alive"
            )
    entries = [
        {"topic": t, "partition": p, "replicas": r}
        | ({"log_dirs": dirs[(t, p)]} if (t, p) in dirs else {})
        for (t, p), r in targets.items()
        if current[(t, p)] != r or (t, p) in dirs
    ]
    if not entries:
        raise PlanRequestInvalid("nothing to roll back: the partitions are already back")
    sizes = {(m.topic, m.partition): m.bytes // max(len(m.added), 1) for m in plan.moves.all()}
    with transaction.atomic():
        rollback = plan_create(
            cluster=plan.cluster,
            origin=PlanOrigin.ROLLBACK,
            mode=PlanMode.ROLLBACK,
            reassignment={"version": 1, "partitions": entries},
            assignment_before=current,
            report={"rollback_of": plan.pk, "sizes_known": plan.report.get("sizes_known", False)},
            actor=user,
            trigger=f"rollback of plan #{plan.pk}",
            sizes=sizes,
            requested_by=user,
            request_reason=reason,
            rollback_of=plan,
            client_address=client_address,
        )
        # On the original plan too, so its own history shows it was rolled back.
        plan_audit_record(
            actor=user,
            action=PlanAction.ROLLBACK_REQUESTED,
            plan=plan,
            after={"rollback_plan": rollback.pk, "state": rollback.state},
            reason=reason,
            client_address=client_address,
        )
    return rollback
