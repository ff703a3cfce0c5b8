"""GET /api/clusters/NAME/canary/: the canary's rounds per broker, oldest first, within
since/until, to a viewer of that cluster only."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.access.roles import Role
from apps.canary.models import CanaryBand, CanaryWindow
from apps.clusters.models import Cluster
from tests.support.factories import user_granted

pytestmark = pytest.mark.django_db


def _round(cluster: Cluster, at, broker: int, p99: float) -> CanaryWindow:
    return CanaryWindow.objects.create(
        cluster=cluster,
        broker_id=broker,
        at=at,
        sent=10,
        acked=9,
        received=9,
        errors=1,
        produce_p50_ms=p99 / 2,
        produce_p99_ms=p99,
        end_to_end_p50_ms=p99,
        end_to_end_p99_ms=p99 * 2,
        last_error="Broker: Request timed out",
    )


def test_it_lists_the_rounds_in_the_window_asked_for(api, cluster) -> None:
    now = timezone.now()
    _round(cluster, now - timedelta(minutes=30), 1, 99.0)
    _round(cluster, now - timedelta(seconds=10), 2, 8.0)
    _round(cluster, now - timedelta(seconds=10), 1, 4.0)
    api.force_login(user_granted("viewer", Role.VIEWER, cluster))

    answer = api.get(
        f"/api/clusters/{cluster.name}/canary/",
        {"since": (now - timedelta(minutes=1)).isoformat()},
    )

    assert answer.status_code == 200
    rows = answer.json()["results"]
    assert [(r["broker_id"], r["produce_p99_ms"]) for r in rows] == [(1, 4.0), (2, 8.0)]
    assert rows[0]["availability"] == 0.9
    assert rows[0]["end_to_end_p99_ms"] == 8.0


def test_it_answers_404_to_a_viewer_of_another_cluster(api, cluster) -> None:
    other = Cluster.objects.create(name="other", bootstrap_servers="127.0.0.1:1")
    _round(cluster, timezone.now(), 1, 4.0)
    api.force_login(user_granted("elsewhere", Role.VIEWER, other))

    assert api.get(f"/api/clusters/{cluster.name}/canary/").status_code == 404


def test_it_refuses_a_window_that_ends_before_it_starts(api, cluster) -> None:
    api.force_login(user_granted("viewer", Role.VIEWER, cluster))
    now = timezone.now()

    answer = api.get(
        f"/api/clusters/{cluster.name}/canary/",
        {"since": now.isoformat(), "until": (now - timedelta(hours=1)).isoformat()},
    )

    assert answer.status_code == 400


def test_it_lists_each_brokers_band(api, cluster) -> None:
    now = timezone.now()
    CanaryBand.objects.create(
        cluster=cluster,
        broker_id=2,
        baseline_ms=30.0,
        top_ms=60.0,
        strikes=2,
        outside=True,
        changed_at=now,
    )
    CanaryBand.objects.create(cluster=cluster, broker_id=1, top_ms=50.0, changed_at=now)
    api.force_login(user_granted("viewer", Role.VIEWER, cluster))

    rows = api.get(f"/api/clusters/{cluster.name}/canary/bands/").json()

    assert [(r["broker_id"], r["top_ms"], r["outside"]) for r in rows] == [
        (1, 50.0, False),
        (2, 60.0, True),
    ]
    assert rows[1]["baseline_ms"] == 30.0
    assert "strikes" not in rows[1]
