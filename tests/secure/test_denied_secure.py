"""A principal missing an ACL is told which operation on which resource it needs: on
the cluster page after a sync, and by the sampler."""

import pytest
from dev_cluster.secure import NO_ALTER_USER, NOBODY
from django.urls import reverse

from apps.clusters.services import cluster_sync
from apps.metrics.services import SampleNotAuthorized, metrics_sample

from .conftest import cluster_register_secured

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


def cluster_page(client, user, cluster) -> str:
    client.force_login(user)
    return client.get(reverse("dashboard:cluster", args=[cluster.name])).content.decode()


def test_it_names_the_missing_alter_on_the_cluster_page(secure_cluster, client, admin_user):
    cluster = cluster_register_secured(secure_cluster, listener="SASL_SSL", principal=NO_ALTER_USER)

    assert cluster_sync(cluster=cluster), cluster.last_sync_error

    page = cluster_page(client, admin_user, cluster)
    assert "lacks Alter on Cluster &#x27;kafka-cluster&#x27;, needed to move replicas" in page


def test_it_names_every_missing_cluster_acl_and_the_topic_create_for_a_bare_principal(
    secure_cluster, client, admin_user
):
    cluster = cluster_register_secured(secure_cluster, listener="MTLS", principal=NOBODY)

    assert cluster_sync(cluster=cluster), cluster.last_sync_error
    page = cluster_page(client, admin_user, cluster)
    assert (
        "lacks Describe, Alter, DescribeConfigs, AlterConfigs on Cluster &#x27;kafka-cluster&#x27;"
        in page
    )
    with pytest.raises(SampleNotAuthorized, match="needs Create on Topic '__balancer_metrics'"):
        metrics_sample(cluster=cluster)
