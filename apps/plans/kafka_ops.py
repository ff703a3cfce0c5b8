"""What the executor asks of a Kafka cluster, behind one small interface (`KafkaOps`).

`apps.kafka_layer.executor_ops.LiveKafka` talks to the real cluster; unit tests pass a
fake with the same methods.
"""

from typing import Protocol

from apps.clusters.models import Cluster
from apps.kafka_layer.executor_ops import (
    BROKER_THROTTLE_KEYS,
    TOPIC_THROTTLE_KEYS,
    KafkaOpError,
    KafkaOpNotAuthorized,
    LiveKafka,
    PartitionInfo,
    PartitionKey,
)

__all__ = [
    "BROKER_THROTTLE_KEYS",
    "TOPIC_THROTTLE_KEYS",
    "KafkaOpError",
    "KafkaOpNotAuthorized",
    "KafkaOps",
    "LiveKafka",
    "PartitionInfo",
    "PartitionKey",
    "kafka_ops_resolve",
]


class KafkaOps(Protocol):
    def partitions_describe(self, keys: list[PartitionKey]) -> dict[PartitionKey, PartitionInfo]:
        """Current replicas / ISR / leader; a missing partition is absent."""

    def brokers_alive(self) -> set[int]: ...

    def reassignments_list(self, keys: list[PartitionKey]) -> dict[PartitionKey, dict]: ...

    def reassignments_alter(
        self, moves: dict[PartitionKey, list[int] | None]
    ) -> dict[PartitionKey, str | None]: ...

    def reassignments_cancel(self, keys: list[PartitionKey]) -> dict[PartitionKey, str | None]:
        """AlterPartitionReassignments with no target: Kafka drops the added replicas and
        goes back to the original set. Per partition the error name, or None."""

    def replica_log_dirs_alter(
        self, targets: dict[tuple[str, int, int], str]
    ) -> dict[tuple[str, int, int], str | None]:
        """AlterReplicaLogDirs: {(topic, partition, broker): absolute dir}. Per replica the
        error name, or None; REPLICA_NOT_AVAILABLE for one the broker cannot place yet."""

    def replica_log_dirs(self) -> dict[tuple[str, int, int], str]:
        """The dir holding each current replica on every live broker (DescribeLogDirs;
        a future replica of a move in progress is not counted)."""

    def configs_write(
        self, brokers: dict[int, dict[str, str | None]], topics: dict[str, dict[str, str | None]]
    ) -> None:
        """Set (str) or delete (None) each key; raises KafkaOpError naming what failed."""

    def broker_rates_wait(self, brokers: list[int], rate: str, timeout: float) -> bool:
        """Wait until every broker reports `rate` as its throttle; False on timeout."""

    def leaders_elect(
        self, keys: list[PartitionKey], unclean: bool = False
    ) -> dict[PartitionKey, str | None]: ...

    def replica_sizes(self) -> dict[tuple[str, int, int], int]: ...

    def replica_future_sizes(self) -> dict[tuple[str, int, int], int]:
        """Bytes so far of each future replica: the copy of a move between the dirs of
        its broker in progress (DescribeLogDirs)."""


def kafka_ops_resolve(*, cluster: Cluster, kafka: KafkaOps | None = None) -> KafkaOps:
    """The operations given (a test's fake), or the live cluster's."""
    return kafka if kafka is not None else LiveKafka(connection=cluster.connection)
