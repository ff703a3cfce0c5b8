"""A canary round that measured every broker whole, for the live canary tests."""

from __future__ import annotations

from apps.canary.models import CanaryWindow
from apps.canary.services import canary_round
from apps.clusters.models import Cluster


def canary_all_measured(cluster: Cluster, *, brokers: int = 3) -> list[CanaryWindow] | None:
    """Run a round; its windows when `brokers` brokers each had every record acked and
    read back with no error, else None (the next round may)."""
    windows = canary_round(cluster=cluster) or []
    whole = [w for w in windows if w.sent and w.acked == w.sent == w.received and not w.errors]
    return windows if len(whole) == brokers else None
