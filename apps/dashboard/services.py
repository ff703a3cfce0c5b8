"""Dashboard services: what the pages and the API do beyond the plans app's own
services (which they call for every decision, never re-implementing it)."""

import copy
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from apps.audit.services import audit_record
from apps.balancer import engine
from apps.clusters.models import Cluster
from apps.plans import selectors as plans_selectors
from apps.plans.errors import PlanPermissionDenied, PlanRequestInvalid, PlanStateError
from apps.plans.models import ClusterPolicy, Plan, PlanState
from apps.plans.queue import execution_enqueue
from apps.plans.services import planner_options

from .selectors import LoadsBeforeAfter, loads_before_after

MAX_TRAFFIC_SCALE = 100.0


def plan_action_refused_record(
    *, user: AbstractBaseUser, action: str, plan: Plan, error: str, client_address: str | None
) -> None:
    """A refused attempt (e.g. a viewer's forged approve) is audited, not only refused."""
    audit_record(
        actor=user,
        action=f"plan.{action}_refused",
        obj=plan,
        before={"state": plan.state},
        reason=error,
        client_address=client_address,
    )


def plan_execution_start(
    *, plan: Plan, user: AbstractBaseUser, client_address: str | None = None
) -> Plan:
    """(Re)start the executor on an approved plan, e.g. when its queued task was lost.

    Approval already enqueues the execution; this only enqueues it again. The executor
    holds a lease per plan, so a duplicate run is harmless."""
    if not (user.is_authenticated and user.has_perm("plans.approve_plan")):
        raise PlanPermissionDenied("you are not allowed to start executions")
    if plan.state not in (PlanState.APPROVED, PlanState.EXECUTING):
        raise PlanStateError(f"plan #{plan.pk} is {plan.state}; only an approved plan executes")
    with transaction.atomic():
        audit_record(
            actor=user,
            action="plan.execution_requested",
            obj=plan,
            before={"state": plan.state},
            client_address=client_address,
        )
        execution_enqueue(plan_id=plan.pk)
    return plan


# --- what-if ------------------------------------------------------------------------


@dataclass(frozen=True)
class WhatIf:
    mode: str
    brokers: list[int]
    traffic_scale: float
    plan: dict[str, Any]
    report: dict[str, Any]
    loads: LoadsBeforeAfter


def whatif_simulate(
    *,
    cluster: Cluster,
    add_brokers: list[dict[str, Any]] | None = None,
    remove_brokers: list[int] | None = None,
    traffic_scale: float = 1.0,
) -> WhatIf:
    """Plan against a changed copy of the cluster: brokers added (id, rack) or removed,
    traffic scaled. Nothing is stored, proposed or audited."""
    add_brokers = add_brokers or []
    remove_brokers = sorted(set(remove_brokers or []))
    if add_brokers and remove_brokers:
        raise PlanRequestInvalid("simulate adding or removing brokers, not both at once")
    if not 0 < traffic_scale <= MAX_TRAFFIC_SCALE:
        raise PlanRequestInvalid(f"traffic_scale must be in (0, {MAX_TRAFFIC_SCALE:g}]")
    # An unsaved policy gives the defaults without creating one for this cluster.
    policy = ClusterPolicy.objects.filter(cluster=cluster).first() or ClusterPolicy(cluster=cluster)
    snapshot = copy.deepcopy(
        plans_selectors.snapshot_build(cluster=cluster, policy=policy).snapshot
    )
    if not snapshot["partitions"]:
        raise PlanRequestInvalid("the cluster has no partitions the balancer manages yet")
    known = {b["id"] for b in snapshot["brokers"]}
    added_ids = []
    for broker in add_brokers:
        if broker["id"] in known:
            raise PlanRequestInvalid(f"broker {broker['id']} already exists")
        known.add(broker["id"])
        added_ids.append(broker["id"])
        snapshot["brokers"].append({"id": broker["id"], "rack": broker.get("rack"), "alive": True})
    unknown = [b for b in remove_brokers if b not in known]
    if unknown:
        raise PlanRequestInvalid(f"broker {unknown[0]} is not part of cluster {cluster.name}")
    if traffic_scale != 1.0:
        for p in snapshot["partitions"]:
            if "load" in p:
                load = dict(p["load"])
                for key in ("bytes_in", "bytes_out", "messages_in"):
                    load[key] = load.get(key, 0.0) * traffic_scale
                p["load"] = load
    if added_ids:
        mode, brokers = "add-brokers", added_ids
    elif remove_brokers:
        mode, brokers = "remove-brokers", remove_brokers
    else:
        mode, brokers = "full", []
    try:
        proposal = engine.propose(
            snapshot, mode=mode, brokers=brokers, options=planner_options(policy=policy)
        )
    except engine.BalancerError as exc:
        raise PlanRequestInvalid(f"the planner refused: {exc}") from exc
    before = {(p["topic"], p["partition"]): p["replicas"] for p in snapshot["partitions"]}
    after = {(e["topic"], e["partition"]): e["replicas"] for e in proposal.plan["partitions"]}
    return WhatIf(
        mode=mode,
        brokers=brokers,
        traffic_scale=traffic_scale,
        plan=proposal.plan,
        report=proposal.report,
        loads=loads_before_after(snapshot=snapshot, before=before, after=after),
    )
