"""The one place that uses kafka-python.

confluent-kafka has no AlterPartitionReassignments, ListPartitionReassignments
or DescribeLogDirs; kafka-python's KafkaAdminClient has them. Everything else
goes through confluent-kafka (see kafka_clients).
"""

from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from kafka import KafkaAdminClient


@contextmanager
def admin_client_open(*, bootstrap_servers: str) -> Iterator[KafkaAdminClient]:
    timeout_ms = int(settings.KAFKA_REQUEST_TIMEOUT * 1000)
    client = KafkaAdminClient(
        bootstrap_servers=bootstrap_servers.split(","),
        client_id="kafka-balancer",
        request_timeout_ms=timeout_ms,
        api_version_auto_timeout_ms=timeout_ms,
    )
    try:
        yield client
    finally:
        client.close()
