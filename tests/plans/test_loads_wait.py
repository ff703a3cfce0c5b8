"""A rebalance that would move partitions no window measured yet waits for their loads
(PLAN_LOADS_WAIT_SECONDS), so the first plan for a new topic, or for a cluster before
its first window, judges their traffic instead of counting replicas."""

from datetime import timedelta

import pytest
from devkit.partition_loads import partition_load_write
from django.utils import timezone

from apps.plans.models import Plan
from apps.plans.services import cluster_detect
from tests.support.factories import cluster_apply

pytestmark = pytest.mark.django_db

# Counts skewed: broker 1 holds 6 of 9 replicas.
SKEWED_COUNTS = {("orders", i): [[1, 2], [2, 1], [1, 3]][i % 3] for i in range(9)}


@pytest.fixture(autouse=True)
def loads_wait(settings):
    settings.PLAN_LOADS_WAIT_SECONDS = 60


def test_it_waits_for_a_first_window_then_plans_on_counts(orders_cluster):
    cluster_apply(orders_cluster, SKEWED_COUNTS)
    now = timezone.now()

    assert cluster_detect(cluster=orders_cluster, now=now) is None
    assert cluster_detect(cluster=orders_cluster, now=now + timedelta(seconds=30)) is None
    assert not Plan.objects.exists()

    cluster_apply(orders_cluster, SKEWED_COUNTS, now=now + timedelta(seconds=60))
    plan = cluster_detect(cluster=orders_cluster, now=now + timedelta(seconds=61))
    assert plan is not None and "no load window yet: counts only" in plan.trigger


def test_it_plans_on_traffic_once_the_new_partitions_are_measured(orders_cluster):
    # "orders" measured and even; the new topic "clicks" all on broker 1, not measured.
    placement = {("orders", i): [1 + i % 3] for i in range(6)}
    placement.update({("clicks", i): [1] for i in range(6)})
    cluster_apply(orders_cluster, placement)
    start = timezone.now().replace(microsecond=0) - timedelta(minutes=2)

    def window(n: int, *, clicks: bool) -> None:
        for (topic, index), replicas in placement.items():
            if topic == "clicks" and not clicks:
                continue
            partition_load_write(
                cluster=orders_cluster,
                topic=topic,
                partition=index,
                window_start=start + timedelta(seconds=10 * n),
                window_end=start + timedelta(seconds=10 * n + 60),
                leader=replicas[0],
                replicas=replicas,
                bytes_in=5000.0 if topic == "clicks" else 1000.0,
                bytes_out=0.0,
                size=1000,
            )

    window(0, clicks=False)
    assert cluster_detect(cluster=orders_cluster) is None  # counts violated, clicks unmeasured
    window(1, clicks=True)
    plan = cluster_detect(cluster=orders_cluster)  # counts violated too: no slide to confirm

    assert plan is not None
    assert "network-in-distribution" in plan.trigger
    assert "not measured" not in plan.trigger and "counts only" not in plan.trigger
