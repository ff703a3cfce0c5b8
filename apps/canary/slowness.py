"""Which broker makes the canary slow: the one in every canary partition out of its
band and in none within it.

Each broker leads one canary partition whose follower is the next broker, and an
acks=all write waits for both: a stalled broker slows its own partition and the one it
follows in. A broker whose every partition is slow while a partition without it is
fast is the likely cause; its load is ruled out as the reason when it leads no more
than CANARY_SLOW_LOAD_FACTOR x the mean of the alive brokers' partitions. A broker
suspected CANARY_SLOW_ROUNDS rounds in a row is reported slow to the plans app (the
periodic balancer proposes to demote it); as many rounds unsuspected clear it.
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from apps.clusters.models import Cluster
from apps.plans.selectors import slow_brokers_get
from apps.plans.services import broker_slowness_report

from .band_updates import BrokerJudgement
from .models import CanaryBand


def slow_suspects(*, judged: list[BrokerJudgement], replicas: dict[int, list[int]]) -> set[int]:
    """Brokers in every canary partition out of its band and in none within it (only
    partitions whose leader has a band count). `replicas`: {leader: its partition's
    replicas}."""
    banded = [j for j in judged if j.top_ms is not None and j.broker_id in replicas]
    out = [set(replicas[j.broker_id]) for j in banded if not j.within]
    ok = [set(replicas[j.broker_id]) for j in banded if j.within]
    if not out or not ok:
        return set()
    common = set.intersection(*out)
    return {b for b in common if not any(b in s for s in ok)}


def _busy(*, cluster: Cluster) -> set[int]:
    """Alive brokers leading more than CANARY_SLOW_LOAD_FACTOR x the mean: their load
    may explain their latency."""
    counts = dict(cluster.brokers.filter(alive=True).values_list("node_id", "leaders_count"))
    if not counts:
        return set()
    mean = sum(counts.values()) / len(counts)
    return {b for b, n in counts.items() if n > settings.CANARY_SLOW_LOAD_FACTOR * mean}


def canary_slowness_update(
    *, cluster: Cluster, judged: list[BrokerJudgement], replicas: dict[int, list[int]]
) -> None:
    """Count each measured broker's rounds in a row suspected (or not), and report a
    broker slow, or fast again, once the count reaches CANARY_SLOW_ROUNDS."""
    rounds = settings.CANARY_SLOW_ROUNDS
    suspects = slow_suspects(judged=judged, replicas=replicas) - _busy(cluster=cluster)
    reports: list[tuple[int, bool, str]] = []
    flagged = slow_brokers_get(cluster=cluster)
    by_broker = {j.broker_id: j for j in judged}
    with transaction.atomic():
        for band in CanaryBand.objects.select_for_update().filter(
            cluster=cluster, broker_id__in=list(by_broker)
        ):
            b = band.broker_id
            if b in suspects:
                band.slow_streak = max(band.slow_streak, 0) + 1
            else:
                band.slow_streak = min(band.slow_streak, 0) - 1
            band.save(update_fields=["slow_streak"])
            j = by_broker[b]
            if band.slow_streak >= rounds and b not in flagged:
                fast = [x for x in judged if x.within and x.p99_ms is not None]
                peers = min((x.p99_ms for x in fast), default=None)
                reports.append(
                    (
                        b,
                        True,
                        f"canary p99 {j.p99_ms or 0:.0f} ms (band {j.top_ms or 0:.0f} ms) in "
                        f"every partition it holds for {band.slow_streak} rounds"
                        + (f", fastest partition {peers:.0f} ms" if peers is not None else ""),
                    )
                )
            elif band.slow_streak <= -rounds and b in flagged:
                reports.append((b, False, f"canary in band again for {rounds} rounds"))
    for b, slow, reason in reports:
        broker_slowness_report(cluster=cluster, node_id=b, slow=slow, reason=reason)
