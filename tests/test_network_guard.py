"""The suite's guard (tests/support/network_guard.py): a Kafka or Spark call of the
product inside a database transaction is refused and fails the test; outside one, or
inside only the test's own transaction, it goes through."""

import pytest
from django.db import transaction

from apps.kafka_layer import clients as kafka_clients
from apps.kafka_layer import kafka_python_adapter, records_publish
from apps.metrics.services import dispatch
from tests.support.network_guard import GUARD, TransactionOpenAcrossNetwork

pytestmark = pytest.mark.django_db


def test_it_refuses_a_kafka_call_inside_a_transaction() -> None:
    admin = kafka_clients.admin_client_create(bootstrap_servers="127.0.0.1:1")
    with transaction.atomic():
        with pytest.raises(TransactionOpenAcrossNetwork, match="AdminClient.list_topics"):
            admin.list_topics(timeout=0.1)
    assert len(GUARD.take()) == 1  # taken here, or the teardown would fail this test


def test_it_lets_a_call_through_inside_only_the_tests_own_transaction() -> None:
    admin = kafka_clients.admin_client_create(bootstrap_servers="127.0.0.1:1")
    assert callable(admin.list_topics)
    assert GUARD.take() == []


def test_every_product_reference_is_guarded() -> None:
    assert kafka_clients.AdminClient._network_guarded
    assert records_publish.Producer._network_guarded
    assert kafka_python_adapter._ClosingAdminClient._network_guarded
    assert dispatch.aggregation_run.__wrapped__ is not None
    with transaction.atomic():
        with pytest.raises(TransactionOpenAcrossNetwork, match="Spark aggregation"):
            dispatch.aggregation_run(cluster=None, spark=None)
    GUARD.take()
