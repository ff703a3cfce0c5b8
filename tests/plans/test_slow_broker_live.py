"""Slow-broker healing on the real dev cluster: broker 2 stopped for 450 ms of every
500 ms slows every canary partition it holds; after CANARY_SLOW_ROUNDS rounds the
canary reports it slow and the periodic balancer proposes to demote it."""

from __future__ import annotations

import uuid

import pytest
from devkit import live
from devkit.polling import wait_until

from apps.canary.band import WARMUP_ROUNDS
from apps.canary.probes import canary_probe_drop
from apps.canary.services import canary_round
from apps.plans.models import PlanMode, SlowBroker
from apps.plans.services import cluster_detect
from tests.plans.test_throttle_auto_live import Stutter

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

SLOW = 2


def test_it_proposes_to_demote_a_broker_the_canary_finds_slow(
    settings, kafka_cluster, admin, topics, admin_user
):
    settings.CANARY_TOPIC = f"it-canary-{uuid.uuid4().hex[:8]}"
    topics.append(settings.CANARY_TOPIC)
    settings.CANARY_RECORDS = 5
    settings.CANARY_SLOW_ROUNDS = 3
    topic = live.topic_name("slow")
    topics.append(topic)
    live.topic_create(admin, topic, assignment=[[1, 2, 3], [2, 3, 1], [3, 1, 2]] * 2)
    cluster = live.cluster_registered(
        kafka_cluster.bootstrap_servers, admin_user, [topic], four_eyes=False
    )
    pid = kafka_cluster.node_pid(SLOW)
    assert pid is not None, "the dev cluster's brokers are not this tool's"
    try:
        # quiet rounds: the topic placed, every broker measured, the bands warmed up
        wait_until(
            lambda: (
                canary_round(cluster=cluster) is not None
                and cluster.canary_bands.filter(fed__gte=WARMUP_ROUNDS).count() == 3
            ),
            60,
            what="every broker's canary band warmed up",
        )
        stutter = Stutter(pid)
        stutter.start()
        try:
            rounds = 0
            while rounds < 8 and not SlowBroker.objects.filter(cluster=cluster).exists():
                ws = canary_round(cluster=cluster)
                assert ws is not None
                print(
                    "DEBUG",
                    [(w.broker_id, w.acked, w.sent, w.produce_p99_ms) for w in ws],
                    list(cluster.canary_bands.values_list("broker_id", "top_ms", "slow_streak")),
                )
                rounds += 1
        finally:
            stutter.done.set()
            stutter.join(10)
    finally:
        canary_probe_drop(cluster=cluster)

    flags = list(SlowBroker.objects.filter(cluster=cluster).values_list("node_id", flat=True))
    assert flags == [SLOW], (flags, rounds)
    plan = cluster_detect(cluster=cluster)
    assert plan is not None and plan.mode == PlanMode.DEMOTE and plan.brokers == [SLOW]
    assert all(e["replicas"][0] != SLOW for e in plan.reassignment["partitions"])
