"""Window rows inserted in bulk (a window's 8,000 topic rows with their packed partition
loads): their bounds prepared once per window, and which windows are already stored.
The rows themselves go through core.bulk_write.rows_insert (PostgreSQL's COPY,
elsewhere one prepared INSERT for every row): building a model instance per row and
bulk_create's per-value preparation would be most of the time of storing a window."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model


def ms_to_datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def window_stamps_prepare(*, model: type[Model], ms: Iterable[int]) -> dict[int, Any]:
    """Window bounds (epoch ms) as the database takes them, prepared once per window
    rather than once per row."""
    field = model._meta.get_field("window_start")
    db = connections[DEFAULT_DB_ALIAS]
    return {m: field.get_db_prep_save(ms_to_datetime(m), db) for m in set(ms)}


def windows_stored(*, model: type[Model], cluster_id: int, starts: Iterable[int]) -> set[int]:
    """Which of these window starts (epoch ms) already have rows of `model`."""
    by_dt = {ms_to_datetime(ms): ms for ms in starts}
    if not by_dt:
        return set()
    found = (
        model._default_manager.filter(cluster_id=cluster_id, window_start__in=list(by_dt))
        .values_list("window_start", flat=True)
        .distinct()
    )
    return {by_dt[dt] for dt in found}
