"""At most one round of a kind (sync, sample, aggregation, detection) in flight per cluster.

A round takes a lease on its `ClusterRound` row by compare-and-set; a round due while
the previous one still holds the lease is skipped and counted, never overlapped. The
lease is renewed while the round runs and otherwise expires by itself
(CLUSTER_ROUND_LEASE_SECONDS), so a killed worker blocks the cluster's rounds for that
long at most, however long a round takes.
"""

import logging
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from apps.core.leases import lease_kept, lease_release, lease_take

from .models import Cluster, ClusterRound

logger = logging.getLogger(__name__)


def _round_row(*, cluster: Cluster, kind: str) -> ClusterRound:
    row, _ = ClusterRound.objects.get_or_create(cluster=cluster, kind=kind)
    return row


def round_skip_record(*, cluster: Cluster, kind: str) -> None:
    """Count a round that did not start because the previous one still ran."""
    row = _round_row(cluster=cluster, kind=kind)
    ClusterRound.objects.filter(pk=row.pk).update(
        skipped=F("skipped") + 1, last_skipped_at=timezone.now()
    )
    logger.info("cluster %s: %s round skipped, the previous one still runs", cluster.name, kind)


@contextmanager
def round_lease(*, cluster: Cluster, kind: str) -> Iterator[ClusterRound | None]:
    """Yield the round's row when this round may run, None when one is in flight."""
    row = _round_row(cluster=cluster, kind=kind)
    token = secrets.token_hex(16)
    held = ClusterRound.objects.filter(pk=row.pk)
    fields = {"owner_field": "lease_token", "until_field": "lease_until"}
    if not lease_take(
        row=held, owner=token, seconds=settings.CLUSTER_ROUND_LEASE_SECONDS, **fields
    ):
        round_skip_record(cluster=cluster, kind=kind)
        yield None
        return
    row.refresh_from_db()
    started = time.monotonic()
    try:
        with lease_kept(
            row=held, owner=token, seconds=settings.CLUSTER_ROUND_LEASE_SECONDS, **fields
        ):
            yield row
    finally:
        held.filter(lease_token=token).update(
            last_finished_at=timezone.now(), last_seconds=time.monotonic() - started
        )
        lease_release(row=held, owner=token, **fields)


def rounds_started_before(*, kind: str, seconds: float, now: datetime) -> set[int]:
    """Clusters whose last round of `kind` started less than `seconds` before `now` (or
    runs now)."""
    since = now - timedelta(seconds=seconds)
    started = set()
    rows = ClusterRound.objects.filter(kind=kind).values_list(
        "cluster_id", "last_finished_at", "last_seconds", "lease_until"
    )
    for cluster_id, finished, took, held_until in rows:
        if held_until is not None and held_until > now:
            started.add(cluster_id)
        elif finished is not None and finished - timedelta(seconds=took or 0) > since:
            started.add(cluster_id)
    return started


def round_outcome_record(*, row: ClusterRound, error: str) -> bool:
    """Remember how the round ended; True when that differs from the last round's.

    Callers log only on a change: one warning when a cluster starts failing, one
    line when it recovers, nothing per round in between.
    """
    # Failing or not is the state; a new wording of the same failure is no change.
    changed = bool(row.last_error) != bool(error)
    if row.last_error != error:
        row.last_error = error
        ClusterRound.objects.filter(pk=row.pk).update(last_error=error)
    return changed


def round_degraded_record(*, row: ClusterRound, degraded: str) -> bool:
    """Like round_outcome_record, for what a good round had to do without."""
    changed = bool(row.last_degraded) != bool(degraded)
    if row.last_degraded != degraded:
        row.last_degraded = degraded
        ClusterRound.objects.filter(pk=row.pk).update(last_degraded=degraded)
    return changed
