"""A principal missing an ACL is told which operation on which resource it needs: on
the cluster page after a sync, and by the sampler (which reads no replica sizes without
Describe on the cluster, rather than zeros)."""

import pytest
from dev_cluster.secure import NO_ALTER_USER, NOBODY
from django.urls import reverse

from apps.clusters.models import Cluster
from apps.clusters.services import cluster_sync
from apps.kafka_layer.authorization import KafkaNotAuthorized
from apps.metrics.services import metrics_sample
from apps.metrics.services.sampling import replica_sizes_read
from tests.clusters.pki import Pki
from tests.secure.conftest import cluster_register_secured

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
    with pytest.raises(KafkaNotAuthorized, match="needs Create on Topic '__balancer_metrics'"):
        metrics_sample(cluster=cluster)
    errors: list[str] = []
    assert replica_sizes_read(cluster=cluster, errors=errors) is None
    assert errors == [
        "not authorized: the principal needs Describe on Cluster 'kafka-cluster' "
        "(DescribeLogDirs); docs/security.md lists the ACLs the balancer needs"
    ]


def test_it_says_the_password_is_wrong_on_the_cluster_page(secure_cluster, client, admin_user):
    settings = secure_cluster.client_settings(listener="SASL_SSL", principal=NO_ALTER_USER)
    cluster = Cluster(name="wrong-password", **{**settings, "sasl_password": "not-it"})
    cluster.full_clean()
    cluster.save()

    assert not cluster_sync(cluster=cluster)

    page = cluster_page(client, admin_user, cluster)
    assert "authentication failed:" in page
    assert "Authentication failed during authentication due to invalid credentials" in page


def test_it_says_the_broker_certificate_is_not_trusted_on_the_cluster_page(
    secure_cluster, client, admin_user
):
    settings = secure_cluster.client_settings(listener="SASL_SSL", principal=NO_ALTER_USER)
    other_ca = Pki("Some other CA").ca_pem
    cluster = Cluster(name="unknown-ca", **{**settings, "ssl_ca_pem": other_ca})
    cluster.full_clean()
    cluster.save()

    assert not cluster_sync(cluster=cluster)

    page = cluster_page(client, admin_user, cluster)
    assert "TLS failed:" in page and "certificate verify failed" in page
