"""The sync fan-out, sent by beat every quarter CLUSTER_SYNC_INTERVAL in whole seconds
(CLUSTER_SYNC_TICK): a cluster is synced once its last sync started an interval ago,
less three quarters of a tick, so a lost sync is made up a tick later."""

from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from apps.clusters.models import Cluster, ClusterRound
from apps.clusters.tasks import clusters_sync_all

pytestmark = pytest.mark.django_db


def _sent() -> list[int]:
    with mock.patch("apps.clusters.tasks.cluster_sync_task.apply_async") as sync_async:
        clusters_sync_all()
    return sorted(c.args[0][0] for c in sync_async.call_args_list)


def _last_sync(cluster: Cluster, *, started_ago: float, took: float = 1.0, held=None) -> None:
    now = timezone.now()
    ClusterRound.objects.update_or_create(
        cluster=cluster,
        kind=ClusterRound.SYNC,
        defaults={
            "last_finished_at": now - timedelta(seconds=started_ago - took),
            "last_seconds": took,
            "lease_until": held,
        },
    )


@pytest.fixture
def three(db, settings) -> list[Cluster]:
    settings.CLUSTER_SYNC_INTERVAL = 10
    return [
        Cluster.objects.create(name=f"c{i}", bootstrap_servers=f"127.0.0.1:{i}")
        for i in range(1, 4)
    ]


def test_it_syncs_a_cluster_once_an_interval(three) -> None:
    never, recent, due = three
    _last_sync(recent, started_ago=7.5)  # three ticks after the last sync
    _last_sync(due, started_ago=10.0)  # the tick a whole interval after it

    assert _sent() == [never.pk, due.pk]


def test_it_counts_a_slow_sync_from_its_start(three) -> None:
    _never, slow, _ = three
    _last_sync(slow, started_ago=10.0, took=6.0)  # ended 4 s ago: due all the same
    _last_sync(three[2], started_ago=4.0)

    assert _sent() == [three[0].pk, slow.pk]


def test_it_leaves_a_cluster_whose_sync_holds_its_lease(three) -> None:
    now = timezone.now()
    for cluster in three:
        _last_sync(cluster, started_ago=30.0, held=now + timedelta(seconds=5))
    _last_sync(three[0], started_ago=30.0, held=now - timedelta(seconds=1))  # expired

    assert _sent() == [three[0].pk]


def test_it_ticks_in_whole_seconds_of_at_least_one() -> None:
    from balancer_site.settings import beat_entry

    # django-celery-beat keeps whole seconds; an interval of 0 stops beat altogether.
    assert beat_entry("t", 0.25)["schedule"] == 1
    assert beat_entry("t", 2.5) == {"task": "t", "schedule": 2, "options": {"expire_seconds": 2}}


def test_it_expires_a_queued_sync_at_the_next_tick(three) -> None:
    with mock.patch("apps.clusters.tasks.cluster_sync_task.apply_async") as sync_async:
        clusters_sync_all()

    assert {c.kwargs["expires"] for c in sync_async.call_args_list} == {2.0}
