"""Kafka's authorization failures, said as the ACL the balancer's principal lacks.

Kafka answers a request the authorizer denies with TOPIC_/GROUP_/CLUSTER_AUTHORIZATION_FAILED
and nothing more; what it checked follows from the API. `API_ACLS` is that mapping for
every API the balancer calls (docs/security.md lists the same ACLs), so an operator reads
"needs Alter on Cluster 'kafka-cluster'" instead of an error code or kafka-python's
request dump.
"""

import re

# Kafka's error code names (librdkafka's, e.g. CLUSTER_AUTHORIZATION_FAILED) and
# kafka-python's class names (e.g. ClusterAuthorizationFailedError).
_DENIED = re.compile(r"(TOPIC|GROUP|CLUSTER)_?AUTHORIZATION_?FAILED", re.IGNORECASE)

CLUSTER_RESOURCE = "kafka-cluster"

# API -> (operation, resource type) the authorizer checks for it.
API_ACLS: dict[str, tuple[str, str]] = {
    "DescribeCluster": ("Describe", "Cluster"),
    "DescribeLogDirs": ("Describe", "Cluster"),
    "ListPartitionReassignments": ("Describe", "Cluster"),
    "AlterPartitionReassignments": ("Alter", "Cluster"),
    "ElectLeaders": ("Alter", "Cluster"),
    "DescribeConfigs(broker)": ("DescribeConfigs", "Cluster"),
    "IncrementalAlterConfigs(broker)": ("AlterConfigs", "Cluster"),
    "DescribeConfigs(topic)": ("DescribeConfigs", "Topic"),
    "IncrementalAlterConfigs(topic)": ("AlterConfigs", "Topic"),
    "Metadata": ("Describe", "Topic"),
    "DescribeTopics": ("Describe", "Topic"),
    "ListOffsets": ("Describe", "Topic"),
    "CreateTopics": ("Create", "Topic"),
    "Produce": ("Write", "Topic"),
    "Fetch": ("Read", "Topic"),
    "ListGroups": ("Describe", "Group"),
    "OffsetFetch": ("Describe", "Group"),
}


def authorization_denied(error: BaseException | str) -> bool:
    return bool(_DENIED.search(_text(error)))


def missing_acl_text(*, api: str, resource: str = "") -> str:
    """'not authorized: the principal needs Alter on Cluster 'kafka-cluster' (API)'."""
    operation, resource_type = API_ACLS[api]
    name = CLUSTER_RESOURCE if resource_type == "Cluster" else resource or "*"
    return (
        f"not authorized: the principal needs {operation} on {resource_type} '{name}' "
        f"({api.split('(')[0]}); docs/security.md lists the ACLs the balancer needs"
    )


def kafka_error_text(*, api: str, error: BaseException | str, resource: str = "") -> str:
    """What an operator reads for a failed request: the missing ACL when the authorizer
    denied it, else the API and Kafka's error (without kafka-python's request dump)."""
    if authorization_denied(error):
        return missing_acl_text(api=api, resource=resource)
    text = _text(error)
    # kafka-python: "[Error N] Name: Request '<repr of the whole request>' failed ...".
    text = re.sub(r"Request '.*' failed with response '.*'", "request failed", text, flags=re.S)
    return f"{api.split('(')[0]} failed: {text[:500]}"


def _text(error: BaseException | str) -> str:
    if isinstance(error, str):
        return error
    inner = error.args[0] if error.args else error
    name = getattr(inner, "name", None)  # confluent_kafka.KafkaError
    parts = [type(error).__name__, name() if callable(name) else "", str(inner)]
    return " ".join(p for p in parts if p)


# What the balancer does with each operation on the Cluster resource (docs/security.md).
CLUSTER_OPERATIONS_NEEDED: dict[str, str] = {
    "DESCRIBE": "list reassignments and read replica sizes",
    "ALTER": "move replicas and elect leaders",
    "DESCRIBE_CONFIGS": "read broker throttle rates",
    "ALTER_CONFIGS": "set and remove broker throttle rates",
}

_OPERATION_NAMES = {
    "DESCRIBE": "Describe",
    "ALTER": "Alter",
    "DESCRIBE_CONFIGS": "DescribeConfigs",
    "ALTER_CONFIGS": "AlterConfigs",
}


def cluster_acl_gaps_text(*, authorized: set[str]) -> str:
    """Which needed operations on the Cluster the principal lacks ("" when none).

    `authorized` holds AclOperation names as DescribeCluster reports them.
    """
    if "ALL" in authorized:
        return ""
    missing = [op for op in CLUSTER_OPERATIONS_NEEDED if op not in authorized]
    if not missing:
        return ""
    uses = "; ".join(f"{CLUSTER_OPERATIONS_NEEDED[op]} ({_OPERATION_NAMES[op]})" for op in missing)
    names = ", ".join(_OPERATION_NAMES[op] for op in missing)
    return (
        f"the principal lacks {names} on Cluster '{CLUSTER_RESOURCE}', needed to {uses}; "
        "docs/security.md lists the ACLs the balancer needs"
    )


class KafkaNotAuthorized(Exception):
    """The principal lacks an ACL a request needs; the message names it."""
