"""Detection reacts to newly stored loads, and never proposes from outdated ones."""

from datetime import timedelta

import pytest
from devkit.partition_loads import partition_load_write
from django.utils import timezone

from apps.metrics.services.runs import aggregation_run_start
from apps.metrics.services.storage import aggregation_results_store
from apps.plans.models import Plan
from apps.plans.services import cluster_detect
from apps.plans.services import detection as detection_module
from spark_jobs.partition_loads import AggregationResult
from tests.support.factories import cluster_apply

pytestmark = pytest.mark.django_db

SKEWED = {("orders", i): [[1, 2], [2, 1], [1, 3]][i % 3] for i in range(9)}


def one_window(start_ms: int) -> AggregationResult:
    load = {
        "topic": "orders",
        "partition": 0,
        "window_start": start_ms,
        "window_end": start_ms + 60_000,
        "samples": 6,
        "leader": 1,
        "replicas": [1, 2],
        "messages_in": 1.0,
        "bytes_in": 10.0,
        "bytes_out": 0.0,
        "size": 100,
        "avg_record_size": 10.0,
        "consumer_groups": 0,
    }
    return AggregationResult(input_rows=7, partition_loads=[load], finalized_until_ms=start_ms)


def test_it_enqueues_a_detection_once_stored_loads_commit(
    orders_cluster, monkeypatch, django_capture_on_commit_callbacks
):
    enqueued = []
    monkeypatch.setattr(
        "apps.plans.receivers.cluster_detect_task.delay", lambda pk: enqueued.append(pk)
    )
    run = aggregation_run_start(cluster=orders_cluster)

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        aggregation_results_store(
            cluster=orders_cluster, run=run, topic="m", result=one_window(1_763_784_000_000)
        )
    assert enqueued == []  # not before the rows are visible
    for callback in callbacks:
        callback()

    assert enqueued == [orders_cluster.pk]


def test_it_enqueues_nothing_when_a_run_stored_no_window(
    orders_cluster, monkeypatch, django_capture_on_commit_callbacks
):
    enqueued = []
    monkeypatch.setattr(
        "apps.plans.receivers.cluster_detect_task.delay", lambda pk: enqueued.append(pk)
    )
    run = aggregation_run_start(cluster=orders_cluster)

    with django_capture_on_commit_callbacks(execute=True):
        aggregation_results_store(
            cluster=orders_cluster, run=run, topic="m", result=AggregationResult(input_rows=3)
        )

    assert enqueued == []


def test_it_drops_a_proposal_when_newer_loads_were_stored_while_planning(
    orders_cluster, monkeypatch
):
    cluster_apply(orders_cluster, SKEWED)
    real_planner = detection_module.planner_run

    def planner_while_a_window_lands(**kwargs):
        now = timezone.now()
        partition_load_write(
            cluster=orders_cluster,
            topic="orders",
            partition=0,
            window_start=now - timedelta(seconds=60),
            window_end=now,
            samples=6,
            replicas=[1, 2],
            bytes_in=1.0,
            size=1,
        )
        return real_planner(**kwargs)

    monkeypatch.setattr(detection_module, "planner_run", planner_while_a_window_lands)

    assert cluster_detect(cluster=orders_cluster) is None
    assert not Plan.objects.exists()
    # The detection the new window starts proposes from it.
    monkeypatch.setattr(detection_module, "planner_run", real_planner)
    assert cluster_detect(cluster=orders_cluster) is not None
