"""Isolation of one cluster from another: backoff while unreachable, one round of a
kind in flight per cluster, quiet logs, and cluster I/O on its own queue."""

import logging
from datetime import timedelta
from unittest import mock

import pytest
from confluent_kafka import KafkaError, KafkaException
from django.utils import timezone

from apps.clusters import services as sync_services
from apps.clusters.backoff import clusters_due
from apps.clusters.models import Cluster, ClusterRound
from apps.clusters.rounds import round_lease
from apps.clusters.services import cluster_sync
from apps.clusters.sync_outcome import SyncOutcome
from apps.clusters.tasks import clusters_sync_all
from apps.core.backoff import backoff_seconds
from apps.kafka_layer.cluster_state import ClusterState
from apps.metrics import tasks as metrics_tasks
from apps.metrics.services import sample_round
from apps.metrics.services.sample_round import metrics_sample_round
from apps.metrics.services.sampling import SampleResult
from balancer_site.celery import app

pytestmark = pytest.mark.django_db


class DeadAdmin:
    """An AdminClient whose every request fails as librdkafka fails on a closed port."""

    calls = 0

    def list_topics(self, timeout):
        DeadAdmin.calls += 1
        raise KafkaException(KafkaError(KafkaError._TRANSPORT, "Connection refused"))


def sampled(error: str = "") -> SampleResult:
    return SampleResult(
        ts_ms=0,
        partitions=1,
        records=1,
        consumer_groups=0,
        sizes_known=not error,
        seconds=0.1,
        sizes_error=error,
    )


OK = sampled()


@pytest.fixture(autouse=True)
def _backoff(settings) -> None:
    settings.CLUSTER_BACKOFF_INITIAL = 10.0
    settings.CLUSTER_BACKOFF_MAX = 120.0


@pytest.fixture
def healthy(monkeypatch):
    """Syncs read an empty, healthy cluster, except through a DeadAdmin."""
    good = ClusterState(cluster_id="abc", controller_id=1, brokers=[])
    real = sync_services.cluster_state_read

    def read(*, admin, **kwargs):
        return real(admin=admin, **kwargs) if isinstance(admin, DeadAdmin) else good

    monkeypatch.setattr(sync_services, "cluster_state_read", read)


def test_it_doubles_the_wait_per_failure_up_to_the_cap():
    waits = [backoff_seconds(failures=n, initial=10, cap=120) for n in range(7)]
    assert waits == [0, 10, 20, 40, 80, 120, 120]
    assert backoff_seconds(failures=10_000, initial=10, cap=300) == 300


def test_it_backs_off_an_unreachable_cluster_and_clears_on_success(empty_cluster, healthy):
    before = timezone.now()
    for expected in (10, 20, 40):
        assert cluster_sync(cluster=empty_cluster, admin=DeadAdmin()) is SyncOutcome.FAILED
        empty_cluster.refresh_from_db()
        wait = (empty_cluster.next_sync_at - before).total_seconds()
        assert expected <= wait < expected + 5
        before = timezone.now()
    assert empty_cluster.sync_failures == 3
    assert not clusters_due(now=timezone.now()).filter(pk=empty_cluster.pk).exists()

    assert cluster_sync(cluster=empty_cluster) is SyncOutcome.SYNCED
    empty_cluster.refresh_from_db()
    assert (
        empty_cluster.sync_failures,
        empty_cluster.next_sync_at,
        empty_cluster.last_sync_error,
    ) == (0, None, "")
    assert clusters_due(now=timezone.now()).filter(pk=empty_cluster.pk).exists()


def test_it_warns_once_per_state_change_not_per_round(empty_cluster, healthy, caplog):
    # Sync once OK so the first failure is a change from reachable.
    assert cluster_sync(cluster=empty_cluster)
    caplog.set_level(logging.DEBUG, logger="apps.clusters.services")
    for _ in range(4):
        cluster_sync(cluster=empty_cluster, admin=DeadAdmin())
    cluster_sync(cluster=empty_cluster)

    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.getMessage().split(":")[0] for r in warnings] == ["cluster prod", "cluster prod"]
    assert "unreachable" in warnings[0].getMessage()
    assert warnings[1].getMessage() == "cluster prod: reachable again"
    assert not any(r.exc_info for r in caplog.records)


def test_it_skips_and_counts_a_sync_while_the_previous_one_runs(empty_cluster, healthy, caplog):
    DeadAdmin.calls = 0
    caplog.set_level(logging.DEBUG, logger="apps.clusters")
    with round_lease(cluster=empty_cluster, kind=ClusterRound.SYNC) as held:
        assert held is not None
        assert cluster_sync(cluster=empty_cluster, admin=DeadAdmin()) is SyncOutcome.SKIPPED
        assert cluster_sync(cluster=empty_cluster, admin=DeadAdmin()) is SyncOutcome.SKIPPED
    assert DeadAdmin.calls == 0
    # Not a failure: falsy (the model is not fresh), logged as a skip, no error kept.
    assert not SyncOutcome.SKIPPED and SyncOutcome.SYNCED
    logged = [r.getMessage() for r in caplog.records]
    assert logged == ["cluster prod: sync round skipped, the previous one still runs"] * 2
    empty_cluster.refresh_from_db()
    assert empty_cluster.last_sync_error == "" and empty_cluster.sync_failures == 0
    row = ClusterRound.objects.get(cluster=empty_cluster, kind=ClusterRound.SYNC)
    assert row.skipped == 2 and row.last_skipped_at is not None
    # Released: the next round runs.
    assert cluster_sync(cluster=empty_cluster) is SyncOutcome.SYNCED


def test_it_takes_over_a_lease_left_by_a_killed_round(empty_cluster, healthy, settings):
    ClusterRound.objects.create(
        cluster=empty_cluster,
        kind=ClusterRound.SYNC,
        lease_token="dead",
        lease_until=timezone.now() - timedelta(seconds=1),
    )
    assert cluster_sync(cluster=empty_cluster) is SyncOutcome.SYNCED


def test_it_fans_out_only_clusters_not_in_backoff(empty_cluster):
    waiting = Cluster.objects.create(
        name="c2",
        bootstrap_servers="127.0.0.1:2",
        sync_failures=3,
        next_sync_at=timezone.now() + timedelta(minutes=1),
    )
    with mock.patch("apps.clusters.tasks.cluster_sync_task.apply_async") as sync_async:
        clusters_sync_all()
    with mock.patch.object(metrics_tasks.metrics_sample_task, "apply_async") as sample_async:
        metrics_tasks.metrics_sample_all()
    for enqueued in (sync_async, sample_async):
        assert [c.args[0] for c in enqueued.call_args_list] == [(empty_cluster.pk,)]
        assert enqueued.call_args.kwargs["expires"] > 0
    assert waiting.pk != empty_cluster.pk


def test_it_samples_quietly_once_per_state_change(empty_cluster, monkeypatch, caplog):
    outcomes = iter([RuntimeError("boom 1"), RuntimeError("boom 2"), RuntimeError("boom 3"), OK])

    def sample(**_):
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    monkeypatch.setattr(sample_round, "metrics_sample", sample)
    caplog.set_level(logging.DEBUG, logger="apps.metrics.services.sample_round")
    results = [metrics_sample_round(cluster=empty_cluster) for _ in range(4)]

    assert results == [None, None, None, OK]
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == [
        "cluster prod: sampling failed: boom 1",
        "cluster prod: sampling works again",
    ]
    assert not any(r.exc_info for r in caplog.records)


def test_it_does_not_sample_a_cluster_in_backoff_or_twice_at_once(empty_cluster, monkeypatch):
    monkeypatch.setattr(sample_round, "metrics_sample", lambda **_: OK)
    with round_lease(cluster=empty_cluster, kind=ClusterRound.SAMPLE):
        assert metrics_sample_round(cluster=empty_cluster) is None
    assert ClusterRound.objects.get(cluster=empty_cluster, kind=ClusterRound.SAMPLE).skipped == 1

    Cluster.objects.filter(pk=empty_cluster.pk).update(
        next_sync_at=timezone.now() + timedelta(minutes=1)
    )
    assert metrics_sample_round(cluster=empty_cluster) is None
    Cluster.objects.filter(pk=empty_cluster.pk).update(next_sync_at=None)
    assert metrics_sample_round(cluster=empty_cluster) == OK


@pytest.mark.parametrize(
    ("task", "queue"),
    [
        ("apps.clusters.tasks.clusters_sync_all", "clusters"),
        ("apps.clusters.tasks.cluster_sync_task", "clusters"),
        ("apps.metrics.tasks.metrics_sample_all", "clusters"),
        ("apps.metrics.tasks.metrics_sample_task", "clusters"),
        ("apps.metrics.tasks.metrics_aggregate_task", "aggregation"),
        ("apps.plans.tasks.plan_execute_task", "celery"),
        ("apps.plans.tasks.cluster_detect_task", "celery"),
    ],
)
def test_it_routes_cluster_io_apart_from_plan_execution(task, queue):
    route = app.amqp.router.route({}, task)
    assert route["queue"].name == queue


def test_it_warns_once_when_replica_sizes_become_unknown_and_once_when_back(
    empty_cluster, monkeypatch, caplog
):
    denied = "ClusterAuthorizationFailedError: [Error 31]"
    outcomes = iter([sampled(denied), sampled(denied), sampled(denied), OK])
    monkeypatch.setattr(sample_round, "metrics_sample", lambda **_: next(outcomes))
    caplog.set_level(logging.DEBUG, logger="apps.metrics.services.sample_round")
    for _ in range(4):
        metrics_sample_round(cluster=empty_cluster)

    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == [
        f"cluster prod: replica sizes unknown, estimated from offsets (DescribeLogDirs failed: "
        f"{denied})",
        "cluster prod: replica sizes known again",
    ]
