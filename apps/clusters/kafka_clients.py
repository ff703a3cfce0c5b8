"""confluent-kafka clients built from a Cluster's settings.

confluent-kafka does metadata, offsets, configs, produce/consume and leader
election. The three admin APIs it lacks live in kafka_python_adapter.
"""

from typing import Any

from confluent_kafka.admin import AdminClient
from django.conf import settings


def client_config_build(*, bootstrap_servers: str, extra: dict[str, Any] | None = None) -> dict:
    timeout_ms = int(settings.KAFKA_REQUEST_TIMEOUT * 1000)
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap_servers,
        "socket.timeout.ms": timeout_ms,
        # Fail fast on a dead bootstrap list instead of retrying forever.
        "socket.connection.setup.timeout.ms": timeout_ms,
        "reconnect.backoff.max.ms": 1000,
    }
    config.update(extra or {})
    return config


def admin_client_create(
    *, bootstrap_servers: str, extra: dict[str, Any] | None = None
) -> AdminClient:
    return AdminClient(client_config_build(bootstrap_servers=bootstrap_servers, extra=extra))
