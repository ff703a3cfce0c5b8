"""What happened, as one notification event: built from an audit event (plans and
executions), from the clusters app's signals (brokers and reachability) or from the
canary's (a broker's latency out of its band).

An event carries its one-line summary, so every channel kind says the same thing.
"""

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.clusters.models import Broker, Cluster
from apps.plans.actions import ExecutionAction, PlanAction
from apps.plans.models import ClusterPolicy, Plan

from .models import EventKind

PLAN_OBJECT_TYPE = Plan._meta.label_lower  # "plans.plan"

# Audit actions that are notification events. "plan.cancelled" is an approved plan
# cancelled before it ran: for whoever waits on it, its execution was cancelled.
AUDIT_ACTIONS: dict[str, EventKind] = {
    PlanAction.PROPOSED: EventKind.PLAN_PROPOSED,
    PlanAction.APPROVED: EventKind.PLAN_APPROVED,
    PlanAction.REJECTED: EventKind.PLAN_REJECTED,
    ExecutionAction.STARTED: EventKind.EXECUTION_STARTED,
    ExecutionAction.COMPLETED: EventKind.EXECUTION_COMPLETED,
    ExecutionAction.FAILED: EventKind.EXECUTION_FAILED,
    ExecutionAction.CANCELLED: EventKind.EXECUTION_CANCELLED,
    PlanAction.CANCELLED: EventKind.EXECUTION_CANCELLED,
    ExecutionAction.PAUSED: EventKind.EXECUTION_PAUSED,
    ExecutionAction.RESUMED: EventKind.EXECUTION_RESUMED,
    ExecutionAction.TUNED: EventKind.EXECUTION_TUNED,
}
# What an operator can change on a running execution (audit action "execution.tuned"),
# and the policy field in effect while the execution has no value of its own.
TUNED_LABELS = {
    "throttle_rate": "throttle",
    "max_moves_per_broker": "moves per broker",
    "max_moves_cluster": "moves in the cluster",
}
TUNED_POLICY_FIELDS = {
    "throttle_rate": "throttle_bytes_per_sec",
    "max_moves_per_broker": "max_moves_per_broker",
    "max_moves_cluster": "max_moves_cluster",
}
# Long error texts are cut in the summary line (the full text is in `data`).
SUMMARY_TEXT_MAX = 200


@dataclass(frozen=True)
class Event:
    kind: str
    cluster_id: int
    cluster_name: str
    occurred_at: datetime
    summary: str
    data: dict[str, Any] = field(default_factory=dict)
    url: str = ""


def event_payload(*, event: Event, event_id: str | None = None) -> dict[str, Any]:
    """The JSON a webhook receives; one id per event, the same on every channel."""
    return {
        "id": event_id or str(uuid.uuid4()),
        "event": event.kind,
        "occurred_at": event.occurred_at.isoformat(),
        "cluster": {"id": event.cluster_id, "name": event.cluster_name},
        "summary": event.summary,
        "url": event.url or None,
        "data": event.data,
    }


def _link(route: str, **kwargs: Any) -> str:
    base = settings.NOTIFICATIONS_BASE_URL.rstrip("/")
    if not base:
        return ""
    try:
        return base + reverse(route, kwargs=kwargs)
    except NoReverseMatch:  # the pages are not installed
        return ""


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_TEXT_MAX else text[: SUMMARY_TEXT_MAX - 1] + "…"


def bytes_text(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def throttle_text(rate: int) -> str:
    return f"{bytes_text(rate)}/s" if rate else "none"


def _tuned_changes(audit: AuditEvent, plan: Plan) -> dict[str, dict[str, Any]]:
    """What an "execution.tuned" audit row changed: {setting: {before, after}}; a
    `before` the execution did not set is the cluster policy's value it ran with."""
    before, after = audit.before or {}, audit.after or {}
    policy = None
    changes = {}
    for key in TUNED_LABELS:
        if key not in after:
            continue
        old = before.get(key)
        if old is None:
            # No row yet: the defaults a new policy gets, which the executor used.
            policy = policy or (
                ClusterPolicy.objects.filter(cluster_id=plan.cluster_id).first()
                or ClusterPolicy(cluster_id=plan.cluster_id)
            )
            old = getattr(policy, TUNED_POLICY_FIELDS[key])
        changes[key] = {"before": old, "after": after[key]}
    return changes


def _tuned_text(changes: dict[str, dict[str, Any]]) -> str:
    parts = []
    for key, change in changes.items():
        show = throttle_text if key == "throttle_rate" else str
        parts.append(f"{TUNED_LABELS[key]} {show(change['before'])} → {show(change['after'])}")
    return ", ".join(parts)


# --- plans and executions, from the audit trail ---------------------------------------------


def event_from_audit(*, audit: AuditEvent) -> Event | None:
    """The event an audit row stands for, or None when it is none of ours."""
    kind = AUDIT_ACTIONS.get(audit.action)
    if kind is None or audit.object_type != PLAN_OBJECT_TYPE or not audit.object_id.isdigit():
        return None
    if kind == EventKind.PLAN_PROPOSED and (audit.after or {}).get("supersedes"):
        return None  # it replaced an open proposal: its episode was announced already
    plan = Plan.objects.select_related("cluster").filter(pk=int(audit.object_id)).first()
    if plan is None:
        return None
    what = f"plan #{plan.pk} ({plan.get_mode_display()})"
    changes = _tuned_changes(audit, plan) if kind == EventKind.EXECUTION_TUNED else {}
    size = f"{plan.partition_count} partition(s), {bytes_text(plan.bytes_to_move)} to move"
    by = f" by {audit.actor}"
    reason = f": {_cut(audit.reason)}" if audit.reason else ""
    summaries = {
        EventKind.PLAN_PROPOSED: f"{what} proposed: {size}. Why: {_cut(plan.trigger)}",
        EventKind.PLAN_APPROVED: f"{what} approved{by}{reason}",
        EventKind.PLAN_REJECTED: f"{what} rejected{by}{reason}",
        EventKind.EXECUTION_STARTED: f"{what} execution started: {size}",
        EventKind.EXECUTION_COMPLETED: f"{what} execution completed",
        EventKind.EXECUTION_FAILED: f"{what} execution failed{reason}",
        EventKind.EXECUTION_CANCELLED: (
            f"{what} cancelled{by} before it ran{reason}"
            if audit.action == PlanAction.CANCELLED
            else f"{what} execution cancelled"
        ),
        EventKind.EXECUTION_PAUSED: (
            f"{what} execution paused{by}{reason} (moves in flight finish, no new ones start)"
        ),
        EventKind.EXECUTION_RESUMED: f"{what} execution resumed{by}{reason}",
        EventKind.EXECUTION_TUNED: f"{what} execution changed{by}: {_tuned_text(changes)}{reason}",
    }
    data: dict[str, Any] = {
        "plan": {
            "id": plan.pk,
            "state": plan.state,
            "mode": plan.mode,
            "origin": plan.origin,
            "trigger": plan.trigger,
            "partitions": plan.partition_count,
            "bytes_to_move": plan.bytes_to_move,
        },
        "actor": audit.actor,
        "reason": audit.reason,
        "audit_event": audit.pk,
    }
    if changes:
        data["changes"] = changes
    return Event(
        kind=kind,
        cluster_id=plan.cluster_id,
        cluster_name=plan.cluster.name,
        occurred_at=audit.created_at,
        summary=f"[{plan.cluster.name}] " + summaries[kind][0].upper() + summaries[kind][1:],
        data=data,
        url=_link("dashboard:plan", name=plan.cluster.name, plan_id=plan.pk),
    )


# --- brokers and clusters, from the sync ------------------------------------------------------


def _cluster_event(
    *, cluster: Cluster, kind: str, text: str, at: datetime, data: dict[str, Any]
) -> Event:
    """An event about the cluster as a whole, linked to its page."""
    return Event(
        kind=kind,
        cluster_id=cluster.pk,
        cluster_name=cluster.name,
        occurred_at=at,
        summary=f"[{cluster.name}] {text}",
        data=data,
        url=_link("dashboard:cluster", name=cluster.name),
    )


def event_broker(*, cluster: Cluster, node_id: int, alive: bool, at: datetime) -> Event:
    broker = Broker.objects.filter(cluster=cluster, node_id=node_id).first()
    address = f" ({broker.host}:{broker.port})" if broker and broker.host else ""
    last_seen = broker.last_seen if broker else None
    if alive:
        kind, text = EventKind.BROKER_BACK, f"Broker {node_id}{address} is back"
    else:
        seen = f", last seen {last_seen:%Y-%m-%d %H:%M:%S} UTC" if last_seen else ""
        kind, text = EventKind.BROKER_DEAD, f"Broker {node_id}{address} is dead{seen}"
    data = {
        "broker": node_id,
        "alive": alive,
        "host": broker.host if broker else "",
        "port": broker.port if broker else None,
        "last_seen": last_seen.isoformat() if last_seen else None,
    }
    return _cluster_event(cluster=cluster, kind=kind, text=text, at=at, data=data)


def event_cluster(*, cluster: Cluster, reachable: bool, error: str, at: datetime) -> Event:
    if reachable:
        kind, text = EventKind.CLUSTER_BACK, "Cluster is reachable again"
    else:
        kind, text = EventKind.CLUSTER_UNREACHABLE, f"Cluster is unreachable: {_cut(error)}"
    data = {"reachable": reachable, "error": error}
    return _cluster_event(cluster=cluster, kind=kind, text=text, at=at, data=data)


def event_canary_band(
    *,
    cluster: Cluster,
    broker_id: int,
    outside: bool,
    p99_ms: float | None,
    top_ms: float,
    baseline_ms: float | None,
    at: datetime,
) -> Event:
    if not outside:
        kind = EventKind.CANARY_BACK
        text = f"Broker {broker_id}: canary p99 back in its band (≤ {top_ms:.0f} ms)"
    elif p99_ms is None:
        kind = EventKind.CANARY_SLOW
        text = f"Broker {broker_id}: canary writes not acknowledged (band ≤ {top_ms:.0f} ms)"
    else:
        kind = EventKind.CANARY_SLOW
        text = f"Broker {broker_id}: canary p99 {p99_ms:.0f} ms > its band {top_ms:.0f} ms"
    data = {
        "broker": broker_id,
        "outside": outside,
        "p99_ms": p99_ms,
        "top_ms": top_ms,
        "baseline_ms": baseline_ms,
    }
    return _cluster_event(cluster=cluster, kind=kind, text=text, at=at, data=data)


def event_test(*, cluster: Cluster, channel_name: str, actor: str) -> Event:
    return _cluster_event(
        cluster=cluster,
        kind=EventKind.TEST,
        text=f"Test notification for channel {channel_name!r}, sent by {actor}",
        at=timezone.now(),
        data={"channel": channel_name, "actor": actor},
    )
