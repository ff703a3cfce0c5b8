"""Runs, the per-cluster lock, storing windows, pruning, the sampler's records and topic,
and the metrics_aggregate command spark-submit runs."""

from __future__ import annotations

import io
import json
import sys
from concurrent.futures import Future
from datetime import timedelta

import pytest
from devkit.partition_loads import partition_loads_read
from django.core.management import CommandError, call_command
from django.utils import timezone

from apps.clusters.models import ClusterRound
from apps.kafka_layer.metrics_topic import metrics_topic_ensure
from apps.kafka_layer.partition_leaders import PartitionLeader
from apps.metrics.models import (
    AggregationRun,
    BrokerLoad,
    MetricsCursor,
    TopicLoad,
)
from apps.metrics.selectors import broker_traffic_series
from apps.metrics.services import (
    AggregationAlreadyRunning,
    aggregation_results_store,
    aggregation_run,
    aggregation_run_start,
    aggregation_submit,
    metric_records_build,
    metrics_windows_prune,
)
from spark_jobs.partition_loads import AggregationResult
from tests.support.factories import cluster_with_dead_broker_make

pytestmark = pytest.mark.django_db

MIN = 60_000


def result_for(*, windows: list[int], next_offsets=None, malformed=0) -> AggregationResult:
    partition_loads, broker_loads = [], []
    for w in windows:
        start = 1_763_784_000_000 + w * MIN  # 2025-11-22T04:00Z + w minutes
        partition_loads.append(
            {
                "topic": "orders",
                "partition": 0,
                "window_start": start,
                "window_end": start + MIN,
                "samples": 6,
                "leader": 1,
                "replicas": [1, 2],
                "messages_in": 50.0 + w,
                "bytes_in": 5000.0,
                "bytes_out": 2000.0,
                "size": 350_000,
                "avg_record_size": 100.0,
                "consumer_groups": 1,
            }
        )
        broker_loads.append(
            {
                "broker": 1,
                "window_start": start,
                "window_end": start + MIN,
                "network_in": 5000.0,
                "network_out": 7000.0,
                "disk": 350_000,
                "replicas": 1,
                "leaders": 1,
            }
        )
    return AggregationResult(
        input_rows=7 * len(windows),
        malformed_rows=malformed,
        partition_loads=partition_loads,
        broker_loads=broker_loads,
        next_offsets=next_offsets or {0: 42},
        finalized_until_ms=(1_763_784_000_000 + (max(windows) + 1) * MIN) if windows else None,
    )


def test_it_allows_one_running_aggregation_per_cluster():
    cluster = cluster_with_dead_broker_make()
    other = cluster_with_dead_broker_make(name="other")
    first = aggregation_run_start(cluster=cluster)

    with pytest.raises(AggregationAlreadyRunning):
        aggregation_run_start(cluster=cluster)
    aggregation_run_start(cluster=other)  # another cluster is not blocked

    first.status = AggregationRun.Status.SUCCEEDED
    first.save()
    aggregation_run_start(cluster=cluster)  # the lock is free again


def test_it_takes_over_from_a_run_abandoned_long_ago(settings):
    settings.METRICS_AGGREGATION_TIMEOUT = 60
    cluster = cluster_with_dead_broker_make()
    dead = aggregation_run_start(cluster=cluster)
    AggregationRun.objects.filter(pk=dead.pk).update(
        started_at=timezone.now() - timedelta(minutes=5)
    )

    aggregation_run_start(cluster=cluster)

    dead.refresh_from_db()
    assert dead.status == AggregationRun.Status.FAILED
    assert "abandoned" in dead.error


def test_it_stores_windows_once_and_advances_the_cursor(settings):
    settings.METRICS_WINDOW_SLIDE_SECONDS = 60  # these windows start a minute apart
    cluster = cluster_with_dead_broker_make()
    run = aggregation_run_start(cluster=cluster)

    aggregation_results_store(
        cluster=cluster,
        run=run,
        topic="m",
        result=result_for(windows=[0, 1], next_offsets={0: 10, 1: 20}),
    )
    # A re-run over the same records (e.g. after a crash) rewrites, never duplicates.
    aggregation_results_store(
        cluster=cluster, run=run, topic="m", result=result_for(windows=[1, 2], next_offsets={1: 30})
    )

    assert len(partition_loads_read(cluster=cluster)) == 3
    assert BrokerLoad.objects.filter(cluster=cluster).count() == 3
    cursor = MetricsCursor.objects.get(cluster=cluster)
    assert cursor.offsets == {"0": 10, "1": 30}
    assert cursor.finalized_until.isoformat() == "2025-11-22T04:03:00+00:00"
    assert run.output_rows == 2 and run.broker_rows == 2 and run.input_rows == 14
    assert run.windows == ["2025-11-22T04:01:00+00:00", "2025-11-22T04:02:00+00:00"]
    (load,) = [p for p in partition_loads_read(cluster=cluster) if p.window_start.minute == 2]
    assert (load.messages_in, load.bytes_in, load.size) == (52.0, 5000.0, 350_000)


def test_it_keeps_the_rows_a_rewritten_window_does_not_repeat():
    cluster = cluster_with_dead_broker_make()
    run = aggregation_run_start(cluster=cluster)
    first = result_for(windows=[0])
    other = {**first.partition_loads[0], "partition": 1, "messages_in": 7.0}
    first.partition_loads.append(other)
    aggregation_results_store(cluster=cluster, run=run, topic="m", result=first)

    again = result_for(windows=[0])
    again.partition_loads[0]["messages_in"] = 99.0
    aggregation_results_store(cluster=cluster, run=run, topic="m", result=again)

    loads = partition_loads_read(cluster=cluster)
    assert [(p.partition, p.messages_in) for p in loads] == [(0, 99.0), (1, 7.0)]
    assert loads[1].replicas == [1, 2]
    # The topic's traffic is summed over both partitions, the kept one included.
    assert TopicLoad.objects.get().partition_count == 2


def test_it_keeps_only_the_last_windows(settings):
    settings.METRICS_WINDOWS_KEPT = 3
    settings.METRICS_WINDOW_SLIDE_SECONDS = 60  # these windows start a minute apart
    cluster = cluster_with_dead_broker_make()
    run = aggregation_run_start(cluster=cluster)

    aggregation_results_store(
        cluster=cluster, run=run, topic="m", result=result_for(windows=[0, 1, 2, 3, 4])
    )

    minutes = sorted(p.window_start.minute for p in partition_loads_read(cluster=cluster))
    assert minutes == [2, 3, 4]
    assert sorted(BrokerLoad.objects.values_list("window_start__minute", flat=True)) == [2, 3, 4]
    assert metrics_windows_prune(cluster=cluster) == 0
    assert metrics_windows_prune(cluster=cluster, keep=2) == 1  # one partition in minute 2


def test_it_keeps_partition_rows_of_fewer_windows_than_broker_totals(settings):
    settings.METRICS_WINDOWS_KEPT = 4
    settings.METRICS_PARTITION_WINDOWS_KEPT = 2
    settings.METRICS_WINDOW_SLIDE_SECONDS = 60
    cluster = cluster_with_dead_broker_make()
    run = aggregation_run_start(cluster=cluster)

    aggregation_results_store(
        cluster=cluster, run=run, topic="m", result=result_for(windows=[0, 1, 2, 3, 4])
    )

    minutes = sorted(p.window_start.minute for p in partition_loads_read(cluster=cluster))
    assert minutes == [3, 4]
    brokers = {r.window_start.minute: r for r in BrokerLoad.objects.filter(cluster=cluster)}
    assert sorted(brokers) == [1, 2, 3, 4]
    # Older windows keep the broker's totals, messages in as leader included ...
    assert [brokers[m].messages_in for m in (1, 2, 3, 4)] == [51.0, 52.0, 53.0, 54.0]
    assert brokers[1].network_in == 5000.0
    traffic = broker_traffic_series(cluster=cluster, windows=4)
    assert traffic.series[1]["messages_in"] == [51.0, 52.0, 53.0, 54.0]


def test_it_flags_a_window_nothing_was_measured_in_and_the_chart_keeps_its_gap(settings):
    settings.METRICS_WINDOWS_KEPT = 4
    settings.METRICS_PARTITION_WINDOWS_KEPT = 1
    settings.METRICS_WINDOW_SLIDE_SECONDS = 60
    cluster = cluster_with_dead_broker_make()
    run = aggregation_run_start(cluster=cluster)
    result = result_for(windows=[0, 1, 2])
    # The first window collected has one sample: no rate, broker totals summed from nothing.
    result.partition_loads[0].update(messages_in=None, bytes_in=None, bytes_out=None)
    result.broker_loads[0].update(network_in=0.0, network_out=0.0)

    aggregation_results_store(cluster=cluster, run=run, topic="m", result=result)

    flags = dict(BrokerLoad.objects.values_list("window_start__minute", "measured"))
    assert flags == {0: False, 1: True, 2: True}
    # Read from the broker rows: the gap outlives the window's partition rows.
    assert [p.window_start.minute for p in partition_loads_read()] == [2]
    traffic = broker_traffic_series(cluster=cluster, windows=4)
    assert traffic.series[1]["network_in"] == [None, 5000.0, 5000.0]
    assert traffic.series[1]["messages_in"] == [None, 51.0, 52.0]


def test_it_deletes_a_clusters_windows_with_it():
    cluster = cluster_with_dead_broker_make()
    run = aggregation_run_start(cluster=cluster)
    aggregation_results_store(cluster=cluster, run=run, topic="m", result=result_for(windows=[0]))
    assert TopicLoad.objects.count() == 1

    cluster.delete()

    # No database constraint on it: the cascade is Django's.
    assert TopicLoad.objects.count() == 0


def test_it_records_a_run_that_fails(settings):
    settings.KAFKA_REQUEST_TIMEOUT = 1.0
    # Nothing listens there.
    cluster = cluster_with_dead_broker_make(bootstrap_servers="127.0.0.1:1")

    run = aggregation_run(cluster=cluster)

    assert run.status == AggregationRun.Status.FAILED
    assert run.finished_at is not None
    assert "KafkaException" in run.error or "Timed out" in run.error
    # The lock is released: the next run can start.
    aggregation_run_start(cluster=cluster)


def test_it_records_a_submission_whose_job_dies(monkeypatch):
    cluster = cluster_with_dead_broker_make()
    monkeypatch.setattr(
        "apps.metrics.services.spark_submit.spark_submit_command",
        lambda **kw: [sys.executable, "-c", "import sys; print('JVM died'); sys.exit(7)"],
    )

    run = aggregation_submit(cluster=cluster)

    assert run.status == AggregationRun.Status.FAILED
    assert run.error.startswith("spark-submit exited 7")
    assert "JVM died" in run.error
    assert AggregationRun.objects.get().pk == run.pk


def test_it_builds_the_spark_submit_command(settings):
    from apps.metrics.services import spark_submit_command

    settings.SPARK_MASTER = "spark://spark-master:7077"
    cluster = cluster_with_dead_broker_make()
    run = aggregation_run_start(cluster=cluster)

    cmd = spark_submit_command(cluster=cluster, run=run)

    assert cmd[0].endswith("spark-submit")
    assert cmd[cmd.index("--master") + 1] == "spark://spark-master:7077"
    assert "spark-sql-kafka-0-10_2.13" in cmd[cmd.index("--jars") + 1]
    assert cmd[-6:] == [cmd[-6], "metrics_aggregate", "--cluster", "demo", "--run-id", str(run.pk)]
    assert cmd[-6].endswith("/manage.py")


def test_it_builds_one_record_per_partition_with_known_offsets():
    partitions = [
        PartitionLeader(topic="orders", partition=0, leader=1, replicas=[1, 2]),
        PartitionLeader(topic="orders", partition=1, leader=-1, replicas=[2, 3]),  # offline
    ]
    records = metric_records_build(
        ts_ms=1_000,
        partitions=partitions,
        start_offsets={("orders", 0): 5},
        end_offsets={("orders", 0): 50},
        # Broker 5 still holds a log of orders-0, which moved off it: not a replica.
        sizes={
            1: {("orders", 0): 4_500, ("other", 0): 9},
            2: {("orders", 0): 4_400},
            5: {("orders", 0): 9},
        },
        committed={("orders", 0): {"g": 40}},
    )

    assert len(records) == 1
    key, value = records[0]
    assert key == b"orders-0"
    assert json.loads(value) == {
        "v": 1,
        "ts": 1_000,
        "topic": "orders",
        "partition": 0,
        "leader": 1,
        "replicas": [1, 2],
        "start_offset": 5,
        "end_offset": 50,
        "sizes": {"1": 4_500, "2": 4_400},
        "committed": {"g": 40},
    }


def test_it_publishes_without_sizes_when_log_dirs_are_unknown():
    records = metric_records_build(
        ts_ms=1,
        partitions=[PartitionLeader(topic="t", partition=0, leader=1, replicas=[1])],
        start_offsets={("t", 0): 0},
        end_offsets={("t", 0): 0},
        sizes=None,
        committed={},
    )

    assert json.loads(records[0][1])["sizes"] == {}


@pytest.mark.parametrize("in_process", [False, True])
def test_it_dispatches_to_spark_submit_or_a_warm_session(settings, monkeypatch, in_process):
    settings.METRICS_AGGREGATION_IN_PROCESS = in_process
    calls = []
    monkeypatch.setattr(
        "apps.metrics.services.dispatch.aggregation_submit",
        lambda **kw: calls.append(("submit", kw)),
    )
    monkeypatch.setattr(
        "apps.metrics.services.dispatch.aggregation_run", lambda **kw: calls.append(("run", kw))
    )
    monkeypatch.setattr(
        "apps.metrics.services.dispatch.spark_session_for_worker", lambda: "session"
    )
    cluster = cluster_with_dead_broker_make()

    from apps.metrics.services import aggregation_dispatch

    aggregation_dispatch(cluster=cluster)

    if in_process:
        # The lock is taken (the run started) before the session is asked for.
        run = AggregationRun.objects.get(cluster=cluster, status=AggregationRun.Status.RUNNING)
        assert calls == [("run", {"cluster": cluster, "spark": "session", "run": run})]
    else:
        assert calls == [("submit", {"cluster": cluster})]


@pytest.mark.parametrize("in_process", [False, True])
def test_it_skips_a_task_while_another_run_holds_the_lock(settings, monkeypatch, in_process):
    from apps.metrics.tasks import metrics_aggregate_task

    settings.METRICS_AGGREGATION_IN_PROCESS = in_process
    cluster = cluster_with_dead_broker_make()
    aggregation_run_start(cluster=cluster)
    monkeypatch.setattr(
        "apps.metrics.services.spark_submit.spark_submit_command",
        lambda **kw: pytest.fail("a second job must not start"),
    )
    # A session that fails any use: the run must stop at the lock.
    monkeypatch.setattr("apps.metrics.services.dispatch.spark_session_for_worker", object)

    metrics_aggregate_task(cluster.pk)  # returns quietly

    assert AggregationRun.objects.filter(cluster=cluster).count() == 1
    # Counted where the cluster page shows it, like skipped sync and sample rounds.
    skipped = ClusterRound.objects.get(cluster=cluster, kind=ClusterRound.AGGREGATION)
    assert skipped.skipped == 1 and skipped.last_skipped_at is not None


class TopicCreatingAdmin:
    """Answers create_topics like a cluster would and keeps what it was asked to create."""

    def __init__(self) -> None:
        self.created: list = []

    def create_topics(self, new_topics, request_timeout):
        self.created += new_topics
        done: Future = Future()
        done.set_result(None)
        return {t.topic: done for t in new_topics}


@pytest.mark.parametrize(("alive_brokers", "replicas"), [(1, 1), (2, 2), (3, 3), (5, 3)])
def test_it_creates_the_metrics_topic_with_no_more_replicas_than_alive_brokers(
    settings, alive_brokers, replicas
):
    settings.METRICS_TOPIC_PARTITIONS = 4
    settings.METRICS_TOPIC_RETENTION_MS = 3_600_000
    admin = TopicCreatingAdmin()

    metrics_topic_ensure(admin=admin, topic="m", existing={"orders"}, brokers=alive_brokers)

    [topic] = admin.created
    assert (topic.topic, topic.num_partitions, topic.replication_factor) == ("m", 4, replicas)
    assert topic.config == {"cleanup.policy": "delete", "retention.ms": "3600000"}


def test_it_leaves_an_existing_metrics_topic_alone():
    admin = TopicCreatingAdmin()

    metrics_topic_ensure(admin=admin, topic="m", existing={"m"}, brokers=3)

    assert admin.created == []


def test_it_exits_2_for_an_unknown_cluster_or_run():
    cluster_with_dead_broker_make()

    with pytest.raises(CommandError) as unknown:
        call_command("metrics_aggregate", "--cluster", "nope")
    with pytest.raises(CommandError) as no_run:
        call_command("metrics_aggregate", "--cluster", "demo", "--run-id", "99")

    assert unknown.value.returncode == 2 and no_run.value.returncode == 2
    assert AggregationRun.objects.count() == 0


def test_it_exits_3_while_another_aggregation_of_the_cluster_runs():
    cluster = cluster_with_dead_broker_make()
    aggregation_run_start(cluster=cluster)

    with pytest.raises(CommandError) as running:
        call_command("metrics_aggregate", "--cluster", "demo")

    assert running.value.returncode == 3


def test_it_exits_1_and_records_the_run_when_the_job_fails(settings):
    settings.KAFKA_REQUEST_TIMEOUT = 1.0
    cluster = cluster_with_dead_broker_make()  # its bootstrap address answers nothing
    run = aggregation_run_start(cluster=cluster)
    out = io.StringIO()

    with pytest.raises(CommandError) as failed:
        call_command("metrics_aggregate", "--cluster", "demo", "--run-id", str(run.pk), stdout=out)

    run.refresh_from_db()
    assert failed.value.returncode == 1
    assert run.status == AggregationRun.Status.FAILED and run.error
    assert out.getvalue().startswith(f"run {run.pk} failed: 0 rows in")
