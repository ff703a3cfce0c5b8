"""The ACLs of the secure profile: exactly what the balancer's principal needs.

docs/security.md carries the same list with the API behind each ACL; a change here
goes there too. Granted idempotently after every `up --secure`, as the super user.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .errors import DevClusterError

CLUSTER_RESOURCE = "kafka-cluster"
METRICS_TOPIC_DEFAULT = "__balancer_metrics"  # balancer_site.settings.METRICS_TOPIC
CANARY_TOPIC_DEFAULT = "__balancer_canary"  # balancer_site.settings.CANARY_TOPIC


@dataclass(frozen=True)
class Acl:
    """One ALLOW ACL: operation on a resource (literal name, `*` for every one)."""

    operation: str  # confluent_kafka AclOperation name
    resource_type: str  # CLUSTER, TOPIC, GROUP
    name: str
    why: str


def balancer_acls(
    metrics_topic: str = METRICS_TOPIC_DEFAULT, canary_topic: str = CANARY_TOPIC_DEFAULT
) -> list[Acl]:
    return [
        Acl(
            "DESCRIBE",
            "CLUSTER",
            CLUSTER_RESOURCE,
            "ListPartitionReassignments, DescribeLogDirs (executor, sampler, sync)",
        ),
        Acl(
            "ALTER",
            "CLUSTER",
            CLUSTER_RESOURCE,
            "AlterPartitionReassignments, ElectLeaders (executor)",
        ),
        Acl(
            "DESCRIBE_CONFIGS",
            "CLUSTER",
            CLUSTER_RESOURCE,
            "DescribeConfigs on brokers: throttle rates read back (executor)",
        ),
        Acl(
            "ALTER_CONFIGS",
            "CLUSTER",
            CLUSTER_RESOURCE,
            "IncrementalAlterConfigs on brokers: throttle rates set/removed (executor)",
        ),
        Acl(
            "DESCRIBE",
            "TOPIC",
            "*",
            "Metadata, DescribeTopics, ListOffsets of every topic (sync, sampler, Spark)",
        ),
        Acl(
            "ALTER_CONFIGS",
            "TOPIC",
            "*",
            "IncrementalAlterConfigs on topics: throttled replica lists (executor)",
        ),
        Acl("DESCRIBE", "GROUP", "*", "ListGroups, OffsetFetch: consumer lag (sampler)"),
        Acl("CREATE", "TOPIC", metrics_topic, "CreateTopics of the metrics topic (sampler)"),
        Acl("WRITE", "TOPIC", metrics_topic, "Produce samples (sampler)"),
        Acl("READ", "TOPIC", metrics_topic, "Fetch samples (Spark's Kafka source)"),
        Acl("CREATE", "TOPIC", canary_topic, "CreateTopics of the canary topic (canary)"),
        Acl("ALTER", "TOPIC", canary_topic, "CreatePartitions for a new broker (canary)"),
        Acl("WRITE", "TOPIC", canary_topic, "Produce probes with acks=all (canary)"),
        Acl("READ", "TOPIC", canary_topic, "Fetch the probes back (canary)"),
    ]


def without(acls: list[Acl], operation: str, resource_type: str) -> list[Acl]:
    return [a for a in acls if (a.operation, a.resource_type) != (operation, resource_type)]


def acls_grant(
    admin_config: dict[str, Any], grants: dict[str, list[Acl]], timeout: float = 30.0
) -> None:
    """Create every ACL for its principal (idempotent); retried while the authorizer loads."""
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
        ResourceType,
    )

    admin = AdminClient({**admin_config, "log_level": 0})
    bindings = [
        AclBinding(
            # confluent-kafka calls the cluster resource BROKER.
            ResourceType[acl.resource_type.replace("CLUSTER", "BROKER")],
            acl.name,
            ResourcePatternType.LITERAL,
            principal,
            "*",
            AclOperation[acl.operation],
            AclPermissionType.ALLOW,
        )
        for principal, acls in grants.items()
        for acl in acls
    ]
    deadline = time.monotonic() + timeout
    while True:
        try:
            for future in admin.create_acls(bindings, request_timeout=10).values():
                future.result()
            return
        except Exception as exc:  # e.g. brokers still loading the metadata after a start
            if time.monotonic() > deadline:
                raise DevClusterError(f"creating the balancer's ACLs failed: {exc}") from exc
            time.sleep(0.5)
