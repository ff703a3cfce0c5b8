"""Rebalancing skewed traffic on the real dev cluster.

Producers at different rates give broker bytes-in 2x apart; the periodic balancer
proposes; after execution broker bytes-in are within +-10 % of the mean.

Loads are measured here from the topics' end offsets over a few seconds (records are
fixed-size) and stored as the metrics app's partition loads (packed per topic), the way its Spark
aggregation stores them; running Spark windows would make the test minutes long.
Broker bytes-in follow BALANCING.md's load model.
"""

import time

import pytest
from devkit import live
from devkit.partition_loads import partition_loads_write
from devkit.polling import wait_until
from devkit.producer import AckedProducer
from django.utils import timezone

from apps.plans.executor import execution_run
from apps.plans.models import PlanMode, PlanState
from apps.plans.services import cluster_detect, plan_approve

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

RECORD = 1024


def measured_loads(admin, keys: list[tuple[str, int]], seconds: float) -> dict:
    """Bytes in per second per partition, from end offsets over `seconds`."""
    first, t0 = live.end_offsets(admin, keys), time.monotonic()
    time.sleep(seconds)  # the scenario: a rate is measured over an interval
    last, t1 = live.end_offsets(admin, keys), time.monotonic()
    return {
        k: {"bytes_in": (last[k] - first[k]) * RECORD / (t1 - t0), "size": last[k] * RECORD}
        for k in keys
    }


def broker_bytes_in(loads: dict, placement: dict) -> dict[int, float]:
    # BALANCING.md §3: every replica's broker takes the partition's bytes in.
    out = {1: 0.0, 2: 0.0, 3: 0.0}
    for key, load in loads.items():
        for b in placement[key][0]:
            out[b] += load["bytes_in"]
    return out


def loads_store(cluster, loads: dict, placement: dict) -> None:
    end = timezone.now()
    start = end - timezone.timedelta(seconds=60)
    partition_loads_write(
        cluster=cluster,
        loads=[
            {
                "topic": t,
                "partition": p,
                "window_start": start,
                "window_end": end,
                "samples": 2,
                "leader": placement[(t, p)][2],
                "replicas": placement[(t, p)][0],
                "messages_in": load["bytes_in"] / RECORD,
                "bytes_in": load["bytes_in"],
                "bytes_out": 0.0,
                "size": load["size"],
                "avg_record_size": RECORD,
            }
            for (t, p), load in loads.items()
        ],
    )


def test_it_rebalances_skewed_traffic_to_within_ten_percent_of_the_mean(
    kafka_cluster, admin, topics, admin_user, approver
):
    hot, cold = live.topic_name("hot"), live.topic_name("cold")
    topics.extend([hot, cold])
    # Hot partitions on brokers 1 and 2 only; cold ones lead on broker 3.
    live.topic_create(admin, hot, assignment=[[1, 2], [2, 1]] * 4)
    live.topic_create(admin, cold, assignment=[[3, 1], [3, 2]] * 4)
    producers = [
        AckedProducer(
            bootstrap=kafka_cluster.bootstrap_servers,
            topic=name,
            partitions=8,
            rate_per_partition=dict.fromkeys(range(8), rate),
        ).start()
        for name, rate in ((hot, 40.0), (cold, 20.0))
    ]
    keys = [(t, p) for t in (hot, cold) for p in range(8)]
    try:
        wait_until(lambda: all(p.acked_count for p in producers), 30, what="both producers acked")
        cluster = live.cluster_registered(
            kafka_cluster.bootstrap_servers,
            admin_user,
            [hot, cold],
            throttle_bytes_per_sec=50_000_000,
        )
        before = live.placement(admin, [hot, cold])
        loads = measured_loads(admin, keys, seconds=8)
        skew = broker_bytes_in(loads, before)
        assert max(skew.values()) >= 2 * min(skew.values()), skew
        loads_store(cluster, loads, before)

        plan = cluster_detect(cluster=cluster)
        assert plan is not None and plan.mode == PlanMode.FULL, "the balancer proposed nothing"
        assert "network-in-distribution" in plan.trigger, plan.trigger
        plan_approve(plan=plan, user=approver)
        plan = execution_run(plan=plan, poll_interval=0.5, max_seconds=180)
        assert plan.state == PlanState.COMPLETED, plan.error

        live.replicas_in_sync(admin, hot, 60)
        after = live.placement(admin, [hot, cold])
        remeasured = measured_loads(admin, keys, seconds=8)
    finally:
        for producer in producers:
            producer.stop()
    balanced = broker_bytes_in(remeasured, after)
    mean = sum(balanced.values()) / 3
    print(f"bytes in per broker: before {skew}, after {balanced}")
    for broker, value in balanced.items():
        assert abs(value - mean) <= 0.10 * mean, (broker, value, mean, balanced, skew)
    live.no_throttles_left(admin, [hot, cold])
