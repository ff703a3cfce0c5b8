"""Read the audit trail: filter (by fields, or by the objects events are about), and
serialise for export."""

import csv
import io
import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import CharField, Q, QuerySet
from django.db.models.functions import Cast

from .models import AuditEvent

EXPORT_FIELDS = (
    "id",
    "created_at",
    "actor_kind",
    "actor",
    "action",
    "object_type",
    "object_id",
    "object_repr",
    "before",
    "after",
    "reason",
    "client_address",
)


def audit_events_filter(
    *,
    actor: str = "",
    actor_kind: str = "",
    action: str = "",
    object_type: str = "",
    object_id: str = "",
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[AuditEvent]:
    """Newest first. `action` matches a prefix, so "plan." finds every plan event."""
    events = AuditEvent.objects.all()
    if actor:
        events = events.filter(actor=actor)
    if actor_kind:
        events = events.filter(actor_kind=actor_kind)
    if action:
        events = events.filter(action__startswith=action)
    if object_type:
        events = events.filter(object_type=object_type)
    if object_id:
        events = events.filter(object_id=object_id)
    if since is not None:
        events = events.filter(created_at__gte=since)
    if until is not None:
        events = events.filter(created_at__lt=until)
    return events.order_by("-created_at", "-id")


def audit_events_explore(
    *,
    about: Iterable[QuerySet] | None = None,
    cluster_ids: set[int] | None = None,
    **filters: Any,
) -> QuerySet[AuditEvent]:
    """`audit_events_filter`, narrowed to the events about any row of the `about`
    querysets (e.g. everything of one cluster) when given, and to the events of these
    clusters (None: every event, those of no cluster included)."""
    events = audit_events_filter(**filters)
    if cluster_ids is not None:
        events = events.filter(cluster_id__in=cluster_ids)
    if about is None:
        return events
    subjects = Q(pk__in=[])  # about nothing: no event
    for rows in about:
        subjects |= Q(object_type=rows.model._meta.label_lower, object_id__in=_ids_as_text(rows))
    return events.filter(subjects)


def _ids_as_text(rows: QuerySet) -> QuerySet:
    # object_id is text (it names rows of any model).
    return rows.annotate(text_id=Cast("pk", CharField())).values("text_id")


def audit_event_row(*, event: AuditEvent) -> dict[str, Any]:
    return {
        "id": event.pk,
        "created_at": event.created_at.isoformat(),
        "actor_kind": event.actor_kind,
        "actor": event.actor,
        "action": event.action,
        "object_type": event.object_type,
        "object_id": event.object_id,
        "object_repr": event.object_repr,
        "before": event.before,
        "after": event.after,
        "reason": event.reason,
        "client_address": event.client_address,
    }


def audit_events_csv_lines(*, events: Iterable[AuditEvent]) -> Iterator[str]:
    """CSV, one line at a time (for a streaming response); JSON columns as JSON text."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate(0)
        return text

    writer.writerow(EXPORT_FIELDS)
    yield flush()
    for event in events:
        row = audit_event_row(event=event)
        for key in ("before", "after"):
            row[key] = "" if row[key] is None else json.dumps(row[key], sort_keys=True)
        writer.writerow([_csv_cell(row[f]) for f in EXPORT_FIELDS])
        yield flush()


def _csv_cell(value: Any) -> Any:
    # Spreadsheet formula injection: a cell starting with = + - @ is shown as text.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return "" if value is None else value


def audit_events_json_chunks(*, events: Iterable[AuditEvent]) -> Iterator[str]:
    """A JSON array, streamed."""
    yield "["
    first = True
    for event in events:
        yield ("" if first else ",\n") + json.dumps(
            audit_event_row(event=event), cls=DjangoJSONEncoder
        )
        first = False
    yield "]\n"
