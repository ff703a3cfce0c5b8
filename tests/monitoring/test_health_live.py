"""/readyz asks the database and Redis; /health/ also beat's heartbeat and each
cluster's last sync, and says which one failed."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.clusters.models import Cluster
from apps.monitoring import heartbeat
from apps.monitoring.heartbeat import beat_heartbeat_record
from tests.support.factories import cluster_make

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def redis_settings(redis_server, settings):
    settings.REDIS_URL = redis_server
    heartbeat._client().delete(heartbeat.KEY)
    return settings


def test_it_is_ready_and_healthy_with_its_dependencies(client, redis_settings) -> None:
    cluster = cluster_make("prod")
    Cluster.objects.filter(pk=cluster.pk).update(last_synced_at=timezone.now())
    beat_heartbeat_record()

    ready = client.get("/readyz?format=json")
    status = client.get("/health/?format=json")

    assert ready.status_code == 200, ready.content
    assert status.status_code == 200, status.content
    assert set(status.json().values()) == {"OK"}
    assert any("prod" in check for check in status.json())


def test_it_names_a_stale_cluster_and_a_silent_beat(client, redis_settings) -> None:
    cluster_make("prod")
    old = timezone.now() - timedelta(seconds=redis_settings.MONITORING_SYNC_AGE_MAX + 30)
    Cluster.objects.filter(name="prod").update(last_synced_at=old)

    ready = client.get("/readyz?format=json")
    status = client.get("/health/?format=json")

    assert ready.status_code == 200  # a Kafka cluster's trouble is not this process's
    assert status.status_code == 500
    failed = {check: text for check, text in status.json().items() if text != "OK"}
    assert any("prod" in check and "last synced" in text for check, text in failed.items())
    assert any("no beat heartbeat" in text for text in failed.values())


def test_it_is_not_ready_without_redis(client, settings) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:1/0"

    ready = client.get("/readyz?format=json")

    assert ready.status_code == 500
    assert [text for text in ready.json().values() if text != "OK"]
