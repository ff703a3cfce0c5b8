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
        # kafka-python 3 renamed api_version_auto_timeout_ms to bootstrap_timeout_ms.
        bootstrap_timeout_ms=timeout_ms,
    )
    try:
        yield client
    finally:
        client.close()


# --- Partition reassignments (used by the plan executor) -----------------------------

PartitionKey = tuple[str, int]


def reassignments_alter(
    *, bootstrap_servers: str, moves: dict[PartitionKey, list[int] | None]
) -> dict[PartitionKey, str | None]:
    """AlterPartitionReassignments: target replica list per partition, None cancels.

    Returns per partition the error name Kafka gave, or None when accepted. A
    partition Kafka did not answer for is reported as "no response".
    """
    from kafka import TopicPartition

    if not moves:
        return {}
    request = {
        TopicPartition(topic, partition): (None if replicas is None else list(replicas))
        for (topic, partition), replicas in moves.items()
    }
    with admin_client_open(bootstrap_servers=bootstrap_servers) as client:
        answered = client.alter_partition_reassignments(request)
    result: dict[PartitionKey, str | None] = {key: "no response" for key in moves}
    for tp, error in answered.items():
        result[(tp.topic, tp.partition)] = None if error is None else error.__name__
    return result


def reassignments_list(
    *, bootstrap_servers: str, partitions: list[PartitionKey] | None = None
) -> dict[PartitionKey, dict[str, list[int]]]:
    """ListPartitionReassignments: the in-flight ones (all, or among `partitions`).

    Each value has `replicas` (the union Kafka currently lists), `adding` and `removing`.
    """
    from kafka import TopicPartition

    if partitions is not None and not partitions:
        return {}
    wanted = None if partitions is None else [TopicPartition(t, p) for t, p in partitions]
    with admin_client_open(bootstrap_servers=bootstrap_servers) as client:
        listed = client.list_partition_reassignments(wanted)
    return {
        (tp.topic, tp.partition): {
            "replicas": list(info["replicas"]),
            "adding": list(info["adding_replicas"]),
            "removing": list(info["removing_replicas"]),
        }
        for tp, info in listed.items()
    }


def replica_sizes_describe(*, bootstrap_servers: str) -> dict[tuple[str, int, int], int]:
    """Bytes on disk of every replica: {(topic, partition, broker_id): size}.

    One DescribeLogDirs request per live broker (plus the metadata request that
    lists the partitions). Future replicas (a move between log dirs in progress)
    are left out: the current log is what serves traffic.
    """
    sizes: dict[tuple[str, int, int], int] = {}
    with admin_client_open(bootstrap_servers=bootstrap_servers) as client:
        for broker in client.describe_log_dirs():
            broker_id = int(broker["broker"])
            for log_dir in broker["log_dirs"]:
                if log_dir.get("error_code", 0):
                    continue  # offline log dir: its replicas are unknown, not empty
                for topic in log_dir["topics"]:
                    for p in topic["partitions"]:
                        if p.get("is_future_key"):
                            continue
                        key = (topic["name"], int(p["partition_index"]), broker_id)
                        sizes[key] = sizes.get(key, 0) + int(p["partition_size"])
    return sizes
