"""Storing a proposal as a plan: its moves, its rollback reassignment, the older open
proposals it supersedes, then the policy's say on approving it at once."""

from collections.abc import Iterable
from datetime import datetime

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.utils import timezone

from apps.audit.services import Actor, audit_record
from apps.balancer import engine
from apps.clusters.models import Cluster

from ..errors import PlanRequestInvalid, PlanStateError
from ..kafka_ops import KafkaOps, PartitionKey
from ..models import Plan, PlanMove, PlanState
from ..selectors import ScopedSnapshot, assignment_fingerprint
from .decisions import plan_auto_approve
from .estimate import bytes_forecast, duration_estimate
from .policy import policy_get
from .sizes import partition_sizes_measure
from .transitions import plan_summarize, plan_transition


def plan_create(
    *,
    cluster: Cluster,
    origin: str,
    mode: str,
    reassignment: dict,
    assignment_before: dict[PartitionKey, list[int]],
    report: dict,
    actor: Actor,
    brokers: Iterable[int] = (),
    trigger: str = "",
    sizes: dict[PartitionKey, int] | None = None,
    data_loss_partitions: Iterable[str] = (),
    requested_by: AbstractBaseUser | None = None,
    request_reason: str = "",
    rollback_of: Plan | None = None,
    client_address: str | None = None,
    sizes_read_at: datetime | None = None,
) -> Plan:
    """Store a proposal with its moves, superseding any older open proposal of the
    cluster, then apply the policy's auto-approval rules."""
    entries = reassignment.get("partitions", [])
    if not entries:
        raise PlanRequestInvalid("the plan changes nothing")
    sizes = sizes or {}
    goals_by_key = {
        (m["topic"], m["partition"]): m.get("goals", []) for m in report.get("moves", [])
    }
    moves = []
    before_of_plan: dict[PartitionKey, list[int]] = {}
    for entry in entries:
        key = (entry["topic"], entry["partition"])
        before = list(assignment_before[key])
        after = list(entry["replicas"])
        before_of_plan[key] = before
        added = [b for b in after if b not in before]
        moves.append(
            PlanMove(
                topic=key[0],
                partition=key[1],
                replicas_before=before,
                replicas_after=after,
                bytes=int(sizes.get(key, 0)) * len(added),
                goals=goals_by_key.get(key, []),
            )
        )
    rollback = {
        "version": 1,
        "partitions": [
            {"topic": t, "partition": p, "replicas": r} for (t, p), r in before_of_plan.items()
        ],
    }
    duration = duration_estimate(
        cluster=cluster,
        moves=moves,
        throttle_rate=policy_get(cluster=cluster).throttle_bytes_per_sec,
    )
    bytes_to_move = bytes_forecast(cluster=cluster, moves=moves, seconds=duration)
    # The plan page's goal filter offers these without reading every move.
    report = {**report, "move_goals": sorted({g for m in moves for g in m.goals})}
    with transaction.atomic():
        plan = Plan.objects.create(
            cluster=cluster,
            origin=origin,
            mode=mode,
            brokers=sorted(set(brokers)),
            trigger=trigger,
            fingerprint=assignment_fingerprint(assignment=before_of_plan),
            reassignment={"version": 1, "partitions": entries},
            rollback_reassignment=rollback,
            report=report,
            bytes_to_move=bytes_to_move,
            bytes_estimated_at=sizes_read_at,
            duration_estimate_seconds=duration,
            data_loss_partitions=sorted(data_loss_partitions),
            requested_by=requested_by,
            request_reason=request_reason,
            rollback_of=rollback_of,
        )
        for move in moves:
            move.plan = plan
        _moves_insert(moves)
        audit_record(
            actor=actor,
            action="plan.proposed",
            obj=plan,
            after=plan_summarize(plan=plan) | {"trigger": trigger, "brokers": plan.brokers},
            reason=request_reason or trigger,
            client_address=client_address,
        )
        older = Plan.objects.filter(cluster=cluster, state=PlanState.PROPOSED).exclude(pk=plan.pk)
        for old in older:
            try:
                plan_transition(
                    plan=old,
                    to=PlanState.SUPERSEDED,
                    actor=actor,
                    action="plan.superseded",
                    reason=f"superseded by plan #{plan.pk}",
                    fields={"superseded_by": plan},
                )
            except PlanStateError:
                pass  # decided meanwhile: nothing left to supersede
    plan_auto_approve(plan=plan)
    return plan


def _moves_insert(moves: list[PlanMove]) -> None:
    """One prepared INSERT executed for every move. bulk_create asks SQLite for the new
    ids in batches of ~70 rows (its 999-parameter limit): seconds for 100k+ moves, and
    nothing here needs the ids."""
    if not moves:
        return
    fields = [f for f in PlanMove._meta.concrete_fields if not f.primary_key]
    # The connection itself, not django.db.connection: that proxy looks the connection
    # up again on every use, and this runs once per field of every move.
    db = connections[DEFAULT_DB_ALIAS]
    qn = db.ops.quote_name
    sql = "INSERT INTO {} ({}) VALUES ({})".format(
        qn(PlanMove._meta.db_table),
        ", ".join(qn(f.column) for f in fields),
        ", ".join(["%s"] * len(fields)),
    )
    params = [[f.get_db_prep_save(f.pre_save(move, True), db) for f in fields] for move in moves]
    with db.cursor() as cursor:
        cursor.executemany(sql, params)


def plan_create_from_proposal(
    *,
    cluster: Cluster,
    scoped: ScopedSnapshot,
    proposal: engine.Proposal,
    origin: str,
    mode: str,
    actor: Actor,
    brokers: Iterable[int] = (),
    trigger: str = "",
    requested_by: AbstractBaseUser | None = None,
    request_reason: str = "",
    client_address: str | None = None,
    kafka: KafkaOps | None = None,
) -> Plan:
    """`plan_create` for what the engine proposed on a snapshot: the starting
    assignment and sizes come from the snapshot, the report from the proposal.

    A moved partition no window measured yet (a new topic) takes its size from
    its replicas' logs now, when the policy auto-approves by size: that rule
    needs every size to decide.
    """
    before, sizes = {}, {}
    for p in scoped.snapshot["partitions"]:
        key = (p["topic"], p["partition"])
        before[key] = p["replicas"]
        if "load" in p and p["load"].get("size") is not None:
            sizes[key] = int(p["load"]["size"])
    copied = [
        (e["topic"], e["partition"])
        for e in proposal.plan.get("partitions", [])
        if set(e["replicas"]) - set(before.get((e["topic"], e["partition"]), []))
    ]
    report = dict(proposal.report)
    # The logs now, not a window's average: the data to copy is what they hold
    # (the window's sizes stand in for partitions Kafka can't size now).
    live = partition_sizes_measure(cluster=cluster, keys=copied, kafka=kafka)
    sizes.update(live)
    report["sizes_from_logs"] = sorted(f"{t}-{p}" for t, p in live)
    unmeasured = [k for k in copied if k not in sizes]
    report["sizes_known"] = not unmeasured
    read_at = timezone.now() if live or not copied else None
    # The loads it was planned from; none: counts only (no window stored yet).
    report["loads_window"] = scoped.snapshot.get("window")
    report["unplaceable"] = scoped.unplaceable
    return plan_create(
        cluster=cluster,
        origin=origin,
        mode=mode,
        reassignment=proposal.plan,
        assignment_before=before,
        report=report,
        actor=actor,
        brokers=brokers,
        trigger=trigger,
        sizes=sizes,
        data_loss_partitions=proposal.report.get("data_loss", {}).get("healed", []),
        requested_by=requested_by,
        request_reason=request_reason,
        client_address=client_address,
        sizes_read_at=read_at,
    )
