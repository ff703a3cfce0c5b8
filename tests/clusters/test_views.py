import pytest
from django.utils import timezone

from apps.clusters.models import Cluster
from apps.clusters.services import cluster_state_apply
from apps.kafka_layer.cluster_state import BrokerState, ClusterState, PartitionState, TopicState

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_cluster() -> Cluster:
    """prod: orders' 3 partitions on brokers 1 and 2 of 1..3."""
    cluster = Cluster.objects.create(name="prod", bootstrap_servers="k1:9092")
    parts = [PartitionState(index=i, leader=1, replicas=[1, 2], isr=[1, 2]) for i in range(3)]
    state = ClusterState(
        cluster_id="x",
        controller_id=100,
        brokers=[BrokerState(node_id=n, host="k", port=9092, rack=None) for n in (1, 2, 3)],
        topics=[TopicState(name="orders", internal=False, partitions=parts)],
    )
    cluster_state_apply(cluster=cluster, state=state, now=timezone.now())
    return cluster


def test_it_requires_login(client, small_cluster):
    for url in ("/", "/clusters/prod/"):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")


def test_it_lists_clusters(client, admin_user, small_cluster):
    client.force_login(admin_user)
    body = client.get("/").content.decode()
    assert "prod" in body and "3 / 3" in body


def test_it_shows_brokers_with_skew_and_topics(client, admin_user, small_cluster):
    client.force_login(admin_user)
    body = client.get("/clusters/prod/").content.decode()
    # 6 replicas over 3 brokers: broker 1 and 2 hold 3 (+50 %), broker 3 none (-100 %).
    assert "50.0 %" in body and "-100.0 %" in body
    assert 'data-topic="orders"' in body


def test_it_shows_the_sync_error(client, admin_user, small_cluster):
    Cluster.objects.filter(pk=small_cluster.pk).update(
        last_sync_error="unreachable: timed out", last_sync_error_at=timezone.now()
    )
    client.force_login(admin_user)
    body = client.get("/clusters/prod/").content.decode()
    assert "unreachable: timed out" in body and "last known state" in body


def test_it_answers_404_for_an_unknown_cluster(client, admin_user):
    client.force_login(admin_user)
    assert client.get("/clusters/nope/").status_code == 404
