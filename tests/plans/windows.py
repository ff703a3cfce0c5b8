"""Detection on slid windows: twelve RF-1 orders partitions, four per broker (even
counts), and windows of their bytes in stored one slide apart, each followed by a
detection round."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from devkit.partition_loads import partition_load_write
from django.utils import timezone

from apps.plans.services import cluster_detect
from tests.support.factories import cluster_apply

SLIDE = 10
PLACEMENT = {("orders", i): [1 + i % 3] for i in range(12)}


def slid_windows(settings, cluster, bytes_in: Callable[..., float]) -> Callable:
    """window(n, **how): store the n-th window (one slide apart), each partition writing
    bytes_in(index, replicas, **how), then detect; the round's plan or None."""
    settings.METRICS_WINDOW_SLIDE_SECONDS = SLIDE
    cluster_apply(cluster, PLACEMENT)
    start = timezone.now().replace(microsecond=0) - timedelta(minutes=5)

    def window(n: int, **how):
        window_start = start + timedelta(seconds=SLIDE * n)
        for (topic, index), replicas in PLACEMENT.items():
            partition_load_write(
                cluster=cluster,
                topic=topic,
                partition=index,
                window_start=window_start,
                window_end=window_start + timedelta(seconds=60),
                samples=6,
                leader=replicas[0],
                replicas=replicas,
                bytes_in=bytes_in(index, replicas, **how),
                bytes_out=0.0,
                size=1000,
            )
        return cluster_detect(cluster=cluster)

    return window
