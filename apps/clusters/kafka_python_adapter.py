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
