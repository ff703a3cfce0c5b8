"""Per-cluster backoff while a cluster is unreachable.

After `n` failed syncs in a row the next try waits `CLUSTER_BACKOFF_INITIAL * 2**(n-1)`
seconds, capped at `CLUSTER_BACKOFF_MAX`; a good sync clears it. Syncs and samples of a
cluster in backoff are not even enqueued, so a dead cluster costs one short connect
attempt per backoff period instead of a worker slot every round.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q, QuerySet

from apps.core.backoff import backoff_seconds

from .models import Cluster


def cluster_backoff_fail(*, cluster: Cluster, now: datetime) -> None:
    """Count one more failed round and push the next try back."""
    failures = cluster.sync_failures + 1
    delay = backoff_seconds(
        failures=failures,
        initial=settings.CLUSTER_BACKOFF_INITIAL,
        cap=settings.CLUSTER_BACKOFF_MAX,
    )
    cluster.sync_failures, cluster.next_sync_at = failures, now + timedelta(seconds=delay)
    Cluster.objects.filter(pk=cluster.pk).update(
        sync_failures=cluster.sync_failures, next_sync_at=cluster.next_sync_at
    )


def cluster_backoff_clear(*, cluster: Cluster) -> None:
    if cluster.sync_failures or cluster.next_sync_at:
        cluster.sync_failures, cluster.next_sync_at = 0, None
        Cluster.objects.filter(pk=cluster.pk).update(sync_failures=0, next_sync_at=None)


def clusters_due(*, now: datetime) -> QuerySet[Cluster]:
    """Clusters not waiting out a backoff."""
    return Cluster.objects.filter(Q(next_sync_at__isnull=True) | Q(next_sync_at__lte=now))
