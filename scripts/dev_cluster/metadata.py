"""What the running cluster itself reports: the broker ids its metadata lists.

confluent_kafka is imported lazily so the rest of the tool works from a bare python3.
"""

from __future__ import annotations

from typing import Any

from .errors import DevClusterError


def admin_client(bootstrap_servers: str) -> Any:
    """A fresh AdminClient: a cached one may keep reporting a broker we just stopped."""
    try:
        from confluent_kafka.admin import AdminClient
    except ImportError as exc:  # pragma: no cover - only with a bare python3
        raise DevClusterError(
            "confluent_kafka is not importable; run with .venv/bin/python"
        ) from exc
    return AdminClient(
        {
            "bootstrap.servers": bootstrap_servers,
            "socket.connection.setup.timeout.ms": 2000,
            "log_level": 0,  # connection-refused noise while nodes start/stop
            "error_cb": lambda _err: None,
        }
    )


def metadata_brokers(bootstrap_servers: str, timeout: float = 3.0) -> set[int] | None:
    """Broker ids the cluster metadata lists, or None if no broker answers."""
    admin = admin_client(bootstrap_servers)
    from confluent_kafka import KafkaException

    try:
        md = admin.list_topics(timeout=timeout)
    except KafkaException:
        return None
    return set(md.brokers)
