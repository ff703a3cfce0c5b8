"""The canary round with Kafka faked: windows stored per broker with their percentiles,
old ones pruned, a failure recorded on the round once and nothing stored."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.canary import services
from apps.canary.models import CanaryWindow
from apps.canary.stats import percentile
from apps.clusters.models import Broker, ClusterRound
from apps.kafka_layer.canary import BrokerProbe, _replicas_for
from apps.kafka_layer.clients import KafkaException

pytestmark = pytest.mark.django_db


class FakeProbe:
    def __init__(self, results: dict[int, BrokerProbe]) -> None:
        self.results = results
        self.asked: dict | None = None

    def probe(self, *, leaders, records, timeout):
        self.asked = {"leaders": leaders, "records": records}
        return self.results


@pytest.fixture
def fake_kafka(monkeypatch, cluster):
    Broker.objects.filter(cluster=cluster, node_id=3).update(alive=False)
    probe = FakeProbe(
        {
            1: BrokerProbe(
                sent=4, acked=4, received=4, produce_ms=[3, 1, 2, 40], end_to_end_ms=[5, 6, 7, 90]
            ),
            2: BrokerProbe(
                sent=4,
                acked=2,
                received=2,
                errors=2,
                produce_ms=[2, 2],
                end_to_end_ms=[4, 4],
                last_error="Broker: Request timed out",
            ),
        }
    )
    ensured = {}

    def ensure(*, admin, topic, brokers):
        ensured["brokers"] = sorted(brokers)
        return {1: 0, 2: 1}

    monkeypatch.setattr(services, "admin_client_create", lambda **kw: object())
    monkeypatch.setattr(services, "canary_topic_ensure", ensure)
    monkeypatch.setattr(services, "canary_probe_for", lambda **kw: probe)
    monkeypatch.setattr(services, "canary_partition_replicas", lambda **kw: {0: [1, 2], 1: [2, 1]})
    return probe, ensured


def test_it_gives_the_nearest_rank_percentile() -> None:
    assert percentile([], 99) is None
    assert percentile([5.0], 99) == 5.0
    assert percentile([float(v) for v in range(1, 101)], 99) == 99.0
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.0


def test_it_places_each_brokers_partition_on_it_first_and_on_the_next_broker() -> None:
    assert _replicas_for(1, [1, 2, 3]) == [1, 2]
    assert _replicas_for(3, [1, 2, 3]) == [3, 1]
    assert _replicas_for(7, [7]) == [7]


def test_it_stores_a_window_per_broker_measured(cluster, fake_kafka) -> None:
    probe, ensured = fake_kafka

    windows = services.canary_round(cluster=cluster)

    assert ensured["brokers"] == [1, 2]  # alive brokers only
    assert probe.asked["leaders"] == {1: 0, 2: 1}
    stored = {w.broker_id: w for w in CanaryWindow.objects.filter(cluster=cluster)}
    assert sorted(stored) == [1, 2] and len(windows) == 2
    assert (stored[1].produce_p50_ms, stored[1].produce_p99_ms) == (2.0, 40.0)
    assert (stored[1].end_to_end_p50_ms, stored[1].end_to_end_p99_ms) == (6.0, 90.0)
    assert stored[2].errors == 2 and stored[2].availability == 0.5
    assert stored[2].last_error == "Broker: Request timed out"


def test_it_gives_a_drained_broker_no_canary_partition(cluster, fake_kafka) -> None:
    from apps.plans.models import BrokerDrain

    _probe, ensured = fake_kafka
    BrokerDrain.objects.create(cluster=cluster, node_id=2, drained_at=timezone.now())

    services.canary_round(cluster=cluster)

    assert ensured["brokers"] == [1]


def test_it_gives_a_broker_being_drained_no_canary_partition(cluster, fake_kafka) -> None:
    from apps.plans.models import PlanMode, PlanState
    from tests.support.factories import plan_make

    _probe, ensured = fake_kafka
    plan = plan_make(cluster)
    plan.mode, plan.brokers, plan.state = PlanMode.REMOVE_BROKERS, [1], PlanState.EXECUTING
    plan.save()

    services.canary_round(cluster=cluster)

    assert ensured["brokers"] == [2]


def test_it_forgets_windows_older_than_the_retention(cluster, fake_kafka, settings) -> None:
    settings.CANARY_RETENTION_HOURS = 1
    old = CanaryWindow.objects.create(
        cluster=cluster,
        broker_id=1,
        at=timezone.now() - timedelta(hours=2),
        sent=1,
        acked=1,
        received=1,
        errors=0,
    )

    services.canary_round(cluster=cluster)

    assert not CanaryWindow.objects.filter(pk=old.pk).exists()
    assert CanaryWindow.objects.filter(cluster=cluster).count() == 2


def test_it_records_a_failed_round_and_stores_nothing(cluster, monkeypatch) -> None:
    def refuse(**kwargs):
        raise KafkaException("Broker transport failure")

    monkeypatch.setattr(services, "admin_client_create", lambda **kw: object())
    monkeypatch.setattr(services, "canary_topic_ensure", refuse)

    assert services.canary_round(cluster=cluster) is None

    assert not CanaryWindow.objects.exists()
    row = ClusterRound.objects.get(cluster=cluster, kind=ClusterRound.CANARY)
    assert "Broker transport failure" in row.last_error
