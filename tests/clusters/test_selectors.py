"""Reads of the cluster model: which clusters a user sees, partitions by filter."""

import pytest
from dashboard.factories import cluster_make

from apps.clusters.selectors import cluster_visible_get, clusters_visible_list, partitions_filter

pytestmark = pytest.mark.django_db


@pytest.fixture
def cluster(db):
    return cluster_make()


def test_it_shows_clusters_only_to_role_holders(cluster, viewer, nobody, django_user_model):
    assert list(clusters_visible_list(user=viewer)) == [cluster]
    assert cluster_visible_get(user=viewer, name="prod") == cluster
    assert list(clusters_visible_list(user=nobody)) == []
    assert cluster_visible_get(user=nobody, name="prod") is None
    viewer.is_active = False
    assert list(clusters_visible_list(user=viewer)) == []


def test_it_filters_partitions_by_topic_and_broker(cluster):
    on_3 = partitions_filter(cluster=cluster, broker=3)
    assert [(p.topic.name, p.index) for p in on_3] == [("audit-log", 0), ("audit-log", 1)]
    orders_on_1 = partitions_filter(cluster=cluster, topic="orders", broker=1)
    assert orders_on_1.count() == 6
    assert partitions_filter(cluster=cluster, topic="orders", broker=3).count() == 0
