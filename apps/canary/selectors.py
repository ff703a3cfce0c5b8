"""Reads of the canary's windows."""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

from apps.clusters.models import Cluster

from .models import CanaryBand, CanaryWindow


def canary_windows(*, cluster: Cluster, since: datetime) -> list[CanaryWindow]:
    """The cluster's canary windows from `since` on, oldest first."""
    return list(
        CanaryWindow.objects.filter(cluster=cluster, at__gte=since).order_by("at", "broker_id")
    )


def canary_latest(*, cluster: Cluster) -> list[CanaryWindow]:
    """The last round's window of each broker (one round: they share `at`)."""
    last = CanaryWindow.objects.filter(cluster=cluster).order_by("-at").first()
    if last is None:
        return []
    return list(CanaryWindow.objects.filter(cluster=cluster, at=last.at).order_by("broker_id"))


def canary_windows_filter(
    *, cluster: Cluster, since: datetime | None = None, until: datetime | None = None
) -> QuerySet[CanaryWindow]:
    """The cluster's canary windows in [since, until), oldest first."""
    found = CanaryWindow.objects.filter(cluster=cluster)
    if since is not None:
        found = found.filter(at__gte=since)
    if until is not None:
        found = found.filter(at__lt=until)
    return found.order_by("at", "broker_id")


def canary_bands(*, cluster: Cluster) -> QuerySet[CanaryBand]:
    """Each measured broker's band, by broker id."""
    return CanaryBand.objects.filter(cluster=cluster).order_by("broker_id")
