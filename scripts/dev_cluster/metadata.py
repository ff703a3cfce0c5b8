"""What the running cluster itself reports: the broker ids its metadata lists.

confluent_kafka is imported lazily so the rest of the tool works from a bare python3.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from .errors import DevClusterError


def admin_client(bootstrap_servers: str, security: Mapping[str, Any] | None = None) -> Any:
    """A fresh AdminClient: a cached one may keep reporting a broker we just stopped.

    `security`: librdkafka settings that replace the PLAINTEXT defaults (e.g. the secure
    profile's super user, with its own bootstrap servers)."""
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
            **(security or {}),
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


def replica_assignment(
    bootstrap_servers: str, security: Mapping[str, Any] | None = None, timeout: float = 5.0
) -> dict[str, dict[int, list[int]]] | None:
    """topic -> partition -> replicas (adding ones included) as the metadata says; None
    when no broker answers or a topic's metadata has an error (then nothing is certain)."""
    admin = admin_client(bootstrap_servers, security)
    from confluent_kafka import KafkaException

    try:
        md = admin.list_topics(timeout=timeout)
    except KafkaException:
        return None
    if not md.brokers or any(t.error is not None for t in md.topics.values()):
        return None
    return {
        name: {p.id: list(p.replicas) for p in topic.partitions.values()}
        for name, topic in md.topics.items()
    }


def _describe_quorum(bootstrap_servers: str, timeout: float) -> dict[str, Any] | None:
    """The metadata log's partition from DescribeQuorum (brokers forward it to the
    active controller), or None while no broker or no leader answers.

    kafka-python, because librdkafka has no DescribeQuorum; and a broker's answer to
    DescribeCluster names a random broker, not the controller, in KRaft mode.
    """
    try:
        from kafka import KafkaAdminClient
        from kafka.errors import KafkaConfigurationError, KafkaError
    except ImportError as exc:  # pragma: no cover - only with a bare python3
        raise DevClusterError("kafka-python is not importable; run with .venv/bin/python") from exc
    ms = int(timeout * 1000)
    try:
        admin = KafkaAdminClient(
            bootstrap_servers=bootstrap_servers.split(","),
            request_timeout_ms=ms,
            reconnect_backoff_max_ms=500,
        )
    except KafkaConfigurationError:
        raise
    except (KafkaError, OSError, ValueError):
        return None
    try:
        result = admin.describe_metadata_quorum()
    except (KafkaError, OSError, ValueError):
        return None
    finally:
        admin.close()
    partition = result["topics"][0]["partitions"][0]
    return None if partition.get("error") else partition


def quorum_leader(bootstrap_servers: str, timeout: float = 5.0) -> int | None:
    """Node id of the active controller (the KRaft quorum's leader), or None."""
    partition = _describe_quorum(bootstrap_servers, timeout)
    if partition is None or partition["leader_id"] < 0:
        return None
    return partition["leader_id"]


def quorum_voters_caught_up(
    bootstrap_servers: str, timeout: float = 5.0, within_ms: int = 5000
) -> set[int]:
    """Voters that have caught up with the leader's log in the last within_ms."""
    partition = _describe_quorum(bootstrap_servers, timeout)
    if partition is None or partition["leader_id"] < 0:
        return set()
    now_ms = int(time.time() * 1000)
    return {
        v["replica_id"]
        for v in partition["current_voters"]
        if v["replica_id"] == partition["leader_id"]
        or v["last_caught_up_timestamp"] >= now_ms - within_ms
    }
