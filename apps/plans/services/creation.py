"""Storing a proposal as a plan: its moves, its rollback reassignment, the older open
proposals it supersedes, then the policy's say on approving it at once."""

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from apps.audit.services import Actor
from apps.balancer import engine
from apps.clusters.models import Cluster
from apps.core.bulk_write import rows_insert

from ..actions import PlanAction
from ..errors import PlanRequestInvalid, PlanStale, PlanStateError
from ..kafka_ops import KafkaOps, PartitionKey
from ..models import MoveState, Plan, PlanMove, PlanState, dir_copies_of
from ..selectors import ScopedSnapshot, assignment_current, assignment_fingerprint
from .decisions import plan_auto_approve
from .estimate import bytes_forecast, duration_estimate, partition_write_rates
from .plan_audit import plan_audit_record
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
    disks: Iterable[tuple[int, str]] = (),
    trigger: str = "",
    sizes: dict[PartitionKey, int] | None = None,
    data_loss_partitions: Iterable[str] = (),
    requested_by: AbstractBaseUser | None = None,
    request_reason: str = "",
    rollback_of: Plan | None = None,
    client_address: str | None = None,
    sizes_read_at: datetime | None = None,
    write_rates: dict[PartitionKey, float] | None = None,
    supersede_reason: str = "",
    dirs_before: dict[PartitionKey, list[str | None]] | None = None,
) -> Plan:
    """Store a proposal with its moves, superseding any older open proposal of the
    cluster (`supersede_reason`: why, for whoever opens the older one), then apply the
    policy's auto-approval rules. `write_rates`: bytes/s written to the moved
    partitions, if the caller has them (else the newest window's are read).
    `dirs_before`: each replica's log dir before (JBOD, None where unknown), so a
    rollback puts the replicas the plan moves between dirs back in theirs."""
    entries = reassignment.get("partitions", [])
    if not entries:
        raise PlanRequestInvalid("the plan changes nothing")
    moves, before_of_plan = _moves_draft(
        entries=entries,
        assignment_before=assignment_before,
        sizes=sizes or {},
        report=report,
        dirs_before=dirs_before or {},
    )
    rates = partition_write_rates(cluster=cluster) if write_rates is None else write_rates
    copy = duration_estimate(
        cluster=cluster,
        moves=moves,
        throttle_rate=policy_get(cluster=cluster).throttle_bytes_per_sec,
        rates=rates,
    )
    bytes_to_move = bytes_forecast(cluster=cluster, moves=moves, seconds=copy.seconds, rates=rates)
    # The report's moves (one entry per partition) are the plan's PlanMove rows, stored
    # once. The plan page's goal filter offers move_goals without reading every move.
    report = {k: v for k, v in report.items() if k != "moves"}
    report["move_goals"] = sorted({g for m in moves for g in m.goals})
    fingerprint = assignment_fingerprint(assignment=before_of_plan)
    with transaction.atomic():
        _placement_unchanged_check(cluster=cluster, before=before_of_plan, fingerprint=fingerprint)
        plan = Plan.objects.create(
            cluster=cluster,
            origin=origin,
            mode=mode,
            brokers=sorted(set(brokers)),
            disks=[[b, path] for b, path in sorted(set(disks))],
            trigger=trigger,
            fingerprint=fingerprint,
            reassignment={"version": 1, "partitions": entries},
            rollback_reassignment=_rollback_reassignment(moves=moves),
            report=report,
            bytes_to_move=bytes_to_move,
            bytes_estimated_at=sizes_read_at,
            duration_estimate_seconds=copy.seconds,
            estimate_note=copy.note,
            data_loss_partitions=sorted(data_loss_partitions),
            requested_by=requested_by,
            request_reason=request_reason,
            rollback_of=rollback_of,
        )
        _moves_insert(plan=plan, moves=moves)
        _proposal_record(
            plan=plan,
            actor=actor,
            reason=request_reason or trigger,
            client_address=client_address,
            supersede_reason=supersede_reason,
        )
    plan_auto_approve(plan=plan)
    return plan


def _moves_draft(
    *,
    entries: list[dict],
    assignment_before: dict[PartitionKey, list[int]],
    sizes: dict[PartitionKey, int],
    report: dict,
    dirs_before: dict[PartitionKey, list[str | None]],
) -> tuple[list["_MoveDraft"], dict[PartitionKey, list[int]]]:
    """One draft per entry of the reassignment, and the replicas each partition had."""
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
            _MoveDraft(
                topic=key[0],
                partition=key[1],
                replicas_before=before,
                replicas_after=after,
                log_dirs_after=_log_dirs_of(entry=entry, replicas=after),
                log_dirs_before=_dirs_known(dirs=dirs_before.get(key), replicas=before),
                added=added,
                bytes=int(sizes.get(key, 0)) * len(added),
                goals=goals_by_key.get(key, []),
            )
        )
        draft = moves[-1]
        copies = dir_copies_of(
            topic=draft.topic,
            partition=draft.partition,
            replicas_before=before,
            log_dirs_before=draft.log_dirs_before,
            replicas_after=after,
            log_dirs_after=draft.log_dirs_after,
        )
        draft.bytes_dirs = int(sizes.get(key, 0)) * len(copies)
    return moves, before_of_plan


def _log_dirs_of(*, entry: dict, replicas: list[int]) -> list[str] | None:
    """The entry's `log_dirs` (Kafka's reassignment JSON), one per replica, or None."""
    log_dirs = entry.get("log_dirs")
    if log_dirs is None:
        return None
    if (
        not isinstance(log_dirs, list)
        or len(log_dirs) != len(replicas)
        or not all(isinstance(d, str) and d for d in log_dirs)
    ):
        raise PlanRequestInvalid(
            f"{entry['topic']}-{entry['partition']}: log_dirs must name one dir (or 'any')"
            " per replica"
        )
    return None if all(d == "any" for d in log_dirs) else list(log_dirs)


def _dirs_known(*, dirs: list[str | None] | None, replicas: list[int]) -> list[str] | None:
    """A partition's dirs before, aligned with its replicas ("any" where unknown), or
    None when none is known."""
    if not dirs or len(dirs) != len(replicas) or not any(dirs):
        return None
    return [d or "any" for d in dirs]


def _rollback_reassignment(*, moves: list["_MoveDraft"]) -> dict:
    """The reassignment that puts every moved partition back where it was: its
    replicas, and the dir of each replica the plan sends to a dir, when known."""
    entries = []
    for m in moves:
        entry: dict = {"topic": m.topic, "partition": m.partition, "replicas": m.replicas_before}
        if m.log_dirs_after and m.log_dirs_before:
            targeted = {
                b for b, d in zip(m.replicas_after, m.log_dirs_after, strict=True) if d != "any"
            }
            back = [
                d if b in targeted else "any"
                for b, d in zip(m.replicas_before, m.log_dirs_before, strict=True)
            ]
            if any(d != "any" for d in back):
                entry["log_dirs"] = back
        entries.append(entry)
    return {"version": 1, "partitions": entries}


def _placement_unchanged_check(
    *, cluster: Cluster, before: dict[PartitionKey, list[int]], fingerprint: str
) -> None:
    """Raise PlanStale when a sync moved the plan's partitions since it was planned
    (planned outside any transaction)."""
    now = assignment_current(cluster=cluster, keys=list(before))
    if assignment_fingerprint(assignment=now) != fingerprint:
        raise PlanStale(
            "the placement of the plan's partitions changed while it was made; "
            "it is made again from the cluster as it is now"
        )


def _proposal_record(
    *, plan: Plan, actor: Actor, reason: str, client_address: str | None, supersede_reason: str
) -> None:
    """Audit the new proposal and supersede the cluster's older open ones. A proposal
    replacing an open one continues its episode: notifications announce an episode
    once (notifications.events)."""
    older = list(
        Plan.objects.filter(cluster=plan.cluster, state=PlanState.PROPOSED).exclude(pk=plan.pk)
    )
    plan_audit_record(
        actor=actor,
        action=PlanAction.PROPOSED,
        plan=plan,
        after=plan_summarize(plan=plan)
        | {"trigger": plan.trigger, "brokers": plan.brokers, "supersedes": [o.pk for o in older]},
        reason=reason,
        client_address=client_address,
    )
    why = f"superseded by plan #{plan.pk}"
    if supersede_reason:
        why += f": {supersede_reason}"
    for old in older:
        try:
            plan_transition(
                plan=old,
                to=PlanState.SUPERSEDED,
                actor=actor,
                action=PlanAction.SUPERSEDED,
                reason=why,
                fields={"superseded_by": plan},
            )
        except PlanStateError:
            pass  # decided meanwhile: nothing left to supersede


@dataclass(slots=True)
class _MoveDraft:
    """A move about to be stored: what the estimate reads, without a model instance
    per move (model instances cost far more CPU at tens of thousands of moves)."""

    topic: str
    partition: int
    replicas_before: list[int]
    replicas_after: list[int]
    added: list[int]
    bytes: int
    goals: list[str]
    bytes_dirs: int = 0
    log_dirs_after: list[str] | None = None
    log_dirs_before: list[str] | None = None
    bytes_copied: int | None = None


# PlanMove's columns in the order _moves_insert writes them; the rest are constants.
_MOVE_COLUMNS = (
    "plan",
    "topic",
    "partition",
    "replicas_before",
    "replicas_after",
    "log_dirs_before",
    "log_dirs_after",
    "bytes",
    "bytes_dirs",
    "goals",
    "state",
    "batch",
    "submissions",
    "bytes_done",
    "bytes_copied",
    "started_at",
    "progressed_at",
    "finished_at",
    "error",
)


def _moves_insert(*, plan: Plan, moves: list[_MoveDraft]) -> None:
    """Every move in one statement (`rows_insert`: PostgreSQL's COPY, elsewhere one
    prepared INSERT executed for every row). Rows are built as tuples with the JSON serialised
    once (the fields' get_db_prep_save per value was most of the time, and bulk_create
    asks SQLite for the new ids in batches of ~70 rows); nothing here needs the ids."""
    if not moves:
        return
    meta = PlanMove._meta
    if {f.column for f in meta.concrete_fields if not f.primary_key} != {
        meta.get_field(name).column for name in _MOVE_COLUMNS
    }:
        raise RuntimeError("PlanMove's columns changed: update _MOVE_COLUMNS")  # pragma: no cover
    dumps = json.dumps
    pending = MoveState.PENDING.value
    rows = [
        (
            plan.pk,
            m.topic,
            m.partition,
            dumps(m.replicas_before),
            dumps(m.replicas_after),
            None if m.log_dirs_before is None else dumps(m.log_dirs_before),
            None if m.log_dirs_after is None else dumps(m.log_dirs_after),
            m.bytes,
            m.bytes_dirs,
            dumps(m.goals),
            pending,
            None,
            0,
            0,
            None,
            None,
            None,
            None,
            "",
        )
        for m in moves
    ]
    rows_insert(model=PlanMove, columns=_MOVE_COLUMNS, rows=rows)


def plan_create_from_proposal(
    *,
    cluster: Cluster,
    scoped: ScopedSnapshot,
    proposal: engine.Proposal,
    origin: str,
    mode: str,
    actor: Actor,
    brokers: Iterable[int] = (),
    disks: Iterable[tuple[int, str]] = (),
    trigger: str = "",
    requested_by: AbstractBaseUser | None = None,
    request_reason: str = "",
    client_address: str | None = None,
    kafka: KafkaOps | None = None,
    basis: dict | None = None,
    supersede_reason: str = "",
) -> Plan:
    """`plan_create` for what the engine proposed on a snapshot: the starting
    assignment and sizes come from the snapshot, the report from the proposal.
    `basis`: what the proposal was made for (selectors.proposal_basis), kept with it.

    A moved partition no window measured yet (a new topic) takes its size from
    its replicas' logs now, when the policy auto-approves by size: that rule
    needs every size to decide.
    """
    # Only the partitions the plan changes: their moves and rollback need them.
    planned = {(e["topic"], e["partition"]) for e in proposal.plan.get("partitions", [])}
    before, sizes, rates = {}, {}, {}
    dirs: dict[PartitionKey, list[str | None]] = {}
    for p in scoped.snapshot.partitions:
        key = p.key
        if key not in planned:
            continue
        before[key] = p.replicas
        if p.log_dirs is not None:
            dirs[key] = p.log_dirs
        load = p.load
        if load is not None:
            if load.get("size") is not None:
                sizes[key] = int(load["size"])
            # The newest window's write rate (the snapshot's window is the newest:
            # detection drops a plan made on older loads), so it is not read again.
            if load.get("bytes_in") is not None:
                rates[key] = float(load["bytes_in"])
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
    window = scoped.snapshot.window
    report["loads_window"] = {"start": window.start, "end": window.end} if window else None
    report["unplaceable"] = scoped.unplaceable
    if basis is not None:
        report["basis"] = basis
    return plan_create(
        cluster=cluster,
        origin=origin,
        mode=mode,
        reassignment=proposal.plan,
        assignment_before=before,
        report=report,
        actor=actor,
        brokers=brokers,
        disks=disks,
        trigger=trigger,
        sizes=sizes,
        data_loss_partitions=proposal.report.get("data_loss", {}).get("healed", []),
        requested_by=requested_by,
        request_reason=request_reason,
        client_address=client_address,
        sizes_read_at=read_at,
        write_rates=rates if window is not None else None,
        supersede_reason=supersede_reason,
        dirs_before=dirs,
    )
