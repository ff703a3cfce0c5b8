"""A proposal holds still on the real dev cluster (issue 23's "Done when").

A managed topic lives on brokers 1 and 2; broker 3 stops and comes back, and is then
alive with no replica: an add-brokers proposal. For 75 s (the issue's three minutes
with HOLD_OBSERVE_SECONDS=180) a load window is stored every 10 s (writes jittered by
a few percent, as consecutive windows are) and detection runs after each, with a sync
every round. Planned afresh on each window the proposal would differ most of the time
(checked, so the test can fail); held, at most two proposals are made, and the open
one, read on its page 60 s before, is approved through the API and runs.
"""

import json
import os
import random
import time
from datetime import timedelta

import pytest
from devkit import live
from devkit.partition_loads import partition_loads_write
from devkit.polling import wait_until
from django.test import Client
from django.utils import timezone

from apps.clusters.services import cluster_sync
from apps.plans.executor import execution_run
from apps.plans.models import Plan, PlanMode, PlanState
from apps.plans.selectors import snapshot_build
from apps.plans.services import cluster_detect, planner_run, policy_get

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

# The opened proposal must stay 60 s: 75 s leaves a round to spare.
OBSERVE_S = float(os.environ.get("HOLD_OBSERVE_SECONDS", "75"))
SLIDE_S = 10.0
PARTITIONS = 12


def window_store(cluster, topic: str, start, rng: random.Random) -> None:
    loads = []
    for index in range(PARTITIONS):
        rate = (200_000.0 + 40_000.0 * (index % 4)) * rng.uniform(0.95, 1.05)
        loads.append(
            {
                "topic": topic,
                "partition": index,
                "window_start": start,
                "window_end": start + timedelta(seconds=60),
                "leader": 1 + index % 2,
                "replicas": [1 + index % 2, 2 - index % 2],
                "bytes_in": rate,
                "bytes_out": rate,
                "messages_in": rate / 1000,
                "size": int(rate * 600),
            }
        )
    partition_loads_write(cluster=cluster, loads=loads)


def test_it_holds_one_proposal_through_a_broker_restart_and_approves_it_a_minute_later(
    kafka_cluster, restore_brokers, admin, topics, admin_user, approver, settings
):
    settings.METRICS_WINDOW_SLIDE_SECONDS = int(SLIDE_S)
    topic = live.topic_name("hold")
    topics.append(topic)
    live.topic_create(admin, topic, assignment=[[1 + i % 2, 2 - i % 2] for i in range(PARTITIONS)])
    cluster = live.cluster_registered(
        kafka_cluster.bootstrap_servers,
        admin_user,
        [topic],
        throttle_bytes_per_sec=50_000_000,
        dead_broker_grace=60,
    )
    rng = random.Random(23)
    start = timezone.now().replace(microsecond=0) - timedelta(minutes=1)

    kafka_cluster.stop_broker(3)
    wait_until(
        lambda: cluster_sync(cluster=cluster) and not cluster.brokers.get(node_id=3).alive,
        60,
        1,
        what="the sync seeing broker 3 stopped",
    )
    kafka_cluster.start_broker(3)

    distinct_plans: set[str] = set()
    page = Client()
    page.force_login(approver)
    opened: dict[int, float] = {}  # plan id -> when its page was read
    began = time.monotonic()
    n = 0
    while time.monotonic() - began < OBSERVE_S:
        round_began = time.monotonic()
        assert cluster_sync(cluster=cluster), cluster.last_sync_error
        window_store(cluster, topic, start + timedelta(seconds=SLIDE_S * n), rng)
        n += 1
        plan = cluster_detect(cluster=cluster)
        if cluster.brokers.get(node_id=3).alive:
            fresh = planner_run(
                scoped=snapshot_build(cluster=cluster, policy=policy_get(cluster=cluster)),
                policy=policy_get(cluster=cluster),
                mode=PlanMode.ADD_BROKERS,
                brokers=[3],
            )
            distinct_plans.add(json.dumps(fresh.plan, sort_keys=True))
        if plan is not None and plan.pk not in opened:
            assert page.get(f"/clusters/{cluster.name}/plans/{plan.pk}/").status_code == 200
            opened[plan.pk] = time.monotonic()
        wait_until(
            lambda round_began=round_began: time.monotonic() - round_began >= SLIDE_S,
            SLIDE_S + 1,
            0.2,
            what="the next window",
        )

    proposals = list(Plan.objects.filter(cluster=cluster).order_by("pk"))
    print(
        f"{n} windows, {len(distinct_plans)} distinct fresh plans, "
        f"{len(proposals)} proposal(s): " + ", ".join(f"#{p.pk} {p.state}" for p in proposals)
    )
    # Planned afresh each window, the proposal would have changed again and again.
    assert len(distinct_plans) > 2, "the jitter did not change the plan: the test proves nothing"
    assert 1 <= len(proposals) <= 2
    [open_plan] = [p for p in proposals if p.state == PlanState.PROPOSED]
    assert open_plan.mode == PlanMode.ADD_BROKERS and open_plan.brokers == [3]
    assert time.monotonic() - opened[open_plan.pk] >= 60

    api = Client(enforce_csrf_checks=False)
    api.force_login(approver)
    answer = api.post(
        f"/api/plans/{open_plan.pk}/approve/",
        data={"reason": "read it for a minute"},
        content_type="application/json",
    )
    assert answer.status_code == 200, answer.content
    open_plan.refresh_from_db()
    assert open_plan.state == PlanState.APPROVED
    done = execution_run(plan=open_plan, poll_interval=0.5, max_seconds=120)
    assert done.state == PlanState.COMPLETED, done.error
    placed = live.placement(admin, [topic])
    assert any(3 in replicas for replicas, _, _ in placed.values())
