"""confluent-kafka clients built from a cluster's connection settings.

confluent-kafka does metadata, offsets, configs, produce/consume and leader
election. The three admin APIs it lacks live in kafka_python_adapter.
"""

from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient
from django.conf import settings

from .connection import ClientTimeouts, ConnectionSettings, librdkafka_config

# The client types and errors callers outside this package name.
__all__ = [
    "AdminClient",
    "ConnectionErrors",
    "KafkaError",
    "KafkaException",
    "admin_client_create",
    "client_config_build",
    "client_timeouts",
    "connection_resolve",
]


def client_timeouts() -> ClientTimeouts:
    request = float(settings.KAFKA_REQUEST_TIMEOUT)
    connect = float(settings.KAFKA_CONNECT_TIMEOUT)
    # A dead address should be given up on well before a request would time out.
    return ClientTimeouts(request=request, connect=min(connect, request))


def connection_resolve(
    *, connection: ConnectionSettings | None, bootstrap_servers: str | None
) -> ConnectionSettings:
    """`connection`, or an unsecured one to `bootstrap_servers` (the dev cluster, tests)."""
    if (connection is None) == (bootstrap_servers is None):
        raise TypeError("pass exactly one of connection= and bootstrap_servers=")
    return connection or ConnectionSettings(bootstrap_servers=bootstrap_servers or "")


def client_config_build(
    *,
    connection: ConnectionSettings | None = None,
    bootstrap_servers: str | None = None,
    extra: dict[str, Any] | None = None,
) -> dict:
    """librdkafka settings for one cluster; `extra` adds client tuning (acks, linger.ms, ...)."""
    connection = connection_resolve(connection=connection, bootstrap_servers=bootstrap_servers)
    config = librdkafka_config(connection, timeouts=client_timeouts())
    config.update(extra or {})
    return config


class ConnectionErrors:
    """librdkafka's error_cb for one client: keeps the last TLS or SASL failure.

    A request that fails because of one only says "Broker transport failure" or times
    out; this says why ("SASL authentication error: Authentication failed ...").
    """

    _KINDS = {KafkaError._AUTHENTICATION: "authentication failed", KafkaError._SSL: "TLS failed"}

    def __init__(self) -> None:
        self.last = ""

    def __call__(self, error: KafkaError) -> None:
        kind = self._KINDS.get(error.code())
        if kind:
            self.last = f"{kind}: {error.str()}"

    def drained(self, client: Any) -> str:
        """The last such failure, once the client's queued error events are served."""
        client.poll(0)
        return self.last


def admin_client_create(
    *,
    connection: ConnectionSettings | None = None,
    bootstrap_servers: str | None = None,
    extra: dict[str, Any] | None = None,
    errors: ConnectionErrors | None = None,
) -> AdminClient:
    config = client_config_build(
        connection=connection, bootstrap_servers=bootstrap_servers, extra=extra
    )
    if errors is not None:
        config["error_cb"] = errors
    return AdminClient(config)
