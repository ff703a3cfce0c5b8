"""The secured dev cluster (scripts/dev_cluster/secure.py), started once per session, and
clusters registered on it over SASL_SSL/SCRAM-SHA-512 and over mTLS as the balancer's
principal, which holds only the ACLs docs/security.md lists."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka.admin import AdminClient
from dev_cluster.secure import ADMIN_USER, BALANCER_USER, SecureDevCluster

from apps.clusters.models import Cluster
from apps.kafka_layer.connection import ConnectionSettings
from apps.kafka_layer.kafka_python_adapter import reassignments_alter, reassignments_list

LISTENERS = ("SASL_SSL", "MTLS")


@pytest.fixture(scope="session")
def secure_cluster() -> Iterator[SecureDevCluster]:
    cluster = SecureDevCluster()
    with cluster.use(kafka=True, redis=False):
        yield cluster


@pytest.fixture(scope="session")
def super_admin(secure_cluster: SecureDevCluster) -> AdminClient:
    """An admin client as the super user, for what the test sets up around the balancer."""
    return AdminClient({**secure_cluster.admin_config(), "log_level": 0})


def cluster_register_secured(
    secure_cluster: SecureDevCluster, *, listener: str, principal: str = BALANCER_USER
) -> Cluster:
    cluster = Cluster(
        name=f"secure-{listener.lower().replace('_', '-')}-{uuid.uuid4().hex[:6]}",
        **secure_cluster.client_settings(listener=listener, principal=principal),
    )
    cluster.full_clean()
    cluster.save()
    return Cluster.objects.get(pk=cluster.pk)


@pytest.fixture(params=LISTENERS, ids=["sasl-scram", "mtls"])
def secured(request, db, secure_cluster: SecureDevCluster) -> Cluster:
    """A registered cluster as the balancer's principal, once per listener."""
    return cluster_register_secured(secure_cluster, listener=request.param)


def leftovers_clean(secure_cluster: SecureDevCluster, topics: list[str]) -> None:
    """Teardown safety net: fail executions still running (which removes their
    throttles) and cancel the topics' reassignments still in flight, as the super user."""
    from apps.plans.executor import execution_fail
    from apps.plans.models import Execution, PlanState

    for execution in Execution.objects.select_related("plan"):
        if execution.plan.state == PlanState.EXECUTING:
            execution_fail(plan=execution.plan, error="test teardown")
    admin = ConnectionSettings(
        **secure_cluster.client_settings(listener="SASL_SSL", principal=ADMIN_USER)
    )
    stuck = [k for k in reassignments_list(connection=admin) if k[0] in topics]
    if stuck:
        reassignments_alter(connection=admin, moves=dict.fromkeys(stuck))
