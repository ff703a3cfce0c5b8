"""The operations the executor asks of a live cluster (`LiveKafka`): confluent-kafka for
metadata, configs (throttles) and leader election; the kafka-python adapter for the
reassignment APIs and replica sizes."""

import logging
import time
from dataclasses import dataclass

from confluent_kafka import ElectionType, KafkaException, TopicCollection, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)
from django.conf import settings

from . import kafka_python_adapter
from .authorization import authorization_denied, kafka_error_text
from .clients import admin_client_create
from .connection import ConnectionSettings

logger = logging.getLogger(__name__)

PartitionKey = tuple[str, int]

BROKER_THROTTLE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
TOPIC_THROTTLE_KEYS = (
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)


class KafkaOpError(Exception):
    """A request to Kafka failed as a whole (not one partition of it)."""


class KafkaOpNotAuthorized(KafkaOpError):
    """The principal lacks an ACL: retrying cannot help until someone grants it."""


def _op_error(*, api: str, error: BaseException, resource: str = "") -> KafkaOpError:
    kind = KafkaOpNotAuthorized if authorization_denied(error) else KafkaOpError
    return kind(kafka_error_text(api=api, error=error, resource=resource))


@dataclass(frozen=True)
class PartitionInfo:
    replicas: list[int]
    isr: list[int]
    leader: int | None


class LiveKafka:
    def __init__(self, *, connection: ConnectionSettings, admin: AdminClient | None = None) -> None:
        self.connection = connection
        self._own_admin = admin is None
        self._admin = admin
        self.timeout = float(settings.KAFKA_REQUEST_TIMEOUT)

    @property
    def admin(self) -> AdminClient:
        """Built on first use: the kafka-python operations (log sizes, reassignments)
        need no librdkafka client and its threads."""
        if self._admin is None:
            self._admin = admin_client_create(connection=self.connection)
        return self._admin

    def _renew(self) -> None:
        """A fresh admin client after a failed request. librdkafka keeps sending
        controller-bound requests to the broker it last learnt as the controller; when
        that broker is dead they time out until its metadata refreshes (minutes), while a
        new client learns a live one at once."""
        if self._own_admin:
            self._admin = None  # the next request builds it

    def _wait(self, future, *, api: str, resource: str = ""):
        try:
            return future.result(timeout=self.timeout + 5)
        except KafkaException as exc:
            self._renew()
            raise _op_error(api=api, error=exc, resource=resource) from exc

    def partitions_describe(self, keys: list[PartitionKey]) -> dict[PartitionKey, PartitionInfo]:
        wanted = set(keys)
        out: dict[PartitionKey, PartitionInfo] = {}
        topics = sorted({t for t, _ in keys})
        # A topic a broker doesn't know may be deleted, or that broker's metadata may lag
        # (just restarted): ask again a few times before reporting its partitions absent.
        for attempt in range(4):
            if not topics:
                break
            if attempt:
                time.sleep(0.5)
            futures = self.admin.describe_topics(
                TopicCollection(topics), request_timeout=self.timeout
            )
            unknown = []
            for name, future in futures.items():
                try:
                    description = future.result(timeout=self.timeout + 5)
                except KafkaException as exc:
                    if "UNKNOWN_TOPIC" in str(exc):
                        unknown.append(name)
                        continue
                    self._renew()
                    raise _op_error(api="DescribeTopics", error=exc, resource=name) from exc
                for p in description.partitions:
                    key = (name, p.id)
                    if key in wanted:
                        leader = p.leader.id if p.leader is not None and p.leader.id >= 0 else None
                        out[key] = PartitionInfo(
                            replicas=[n.id for n in p.replicas],
                            isr=[n.id for n in p.isr],
                            leader=leader,
                        )
            topics = sorted(unknown)
        return out

    def brokers_alive(self) -> set[int]:
        description = self._wait(
            self.admin.describe_cluster(request_timeout=self.timeout), api="DescribeCluster"
        )
        return {n.id for n in description.nodes}

    def reassignments_list(self, keys: list[PartitionKey]) -> dict[PartitionKey, dict]:
        try:
            return kafka_python_adapter.reassignments_list(
                connection=self.connection, partitions=keys
            )
        except Exception as exc:  # kafka-python raises many unrelated classes
            raise _op_error(api="ListPartitionReassignments", error=exc) from exc

    def reassignments_alter(
        self, moves: dict[PartitionKey, list[int] | None]
    ) -> dict[PartitionKey, str | None]:
        try:
            return kafka_python_adapter.reassignments_alter(connection=self.connection, moves=moves)
        except Exception as exc:
            raise _op_error(api="AlterPartitionReassignments", error=exc) from exc

    def reassignments_cancel(self, keys: list[PartitionKey]) -> dict[PartitionKey, str | None]:
        return self.reassignments_alter(dict.fromkeys(keys))

    def replica_log_dirs_alter(
        self, targets: dict[tuple[str, int, int], str]
    ) -> dict[tuple[str, int, int], str | None]:
        try:
            return kafka_python_adapter.replica_log_dirs_alter(
                connection=self.connection, targets=targets
            )
        except Exception as exc:
            raise _op_error(api="AlterReplicaLogDirs", error=exc) from exc

    def replica_log_dirs(self) -> dict[tuple[str, int, int], str]:
        try:
            described = kafka_python_adapter.log_dirs_describe(connection=self.connection)
        except Exception as exc:
            raise _op_error(api="DescribeLogDirs", error=exc) from exc
        return {
            (topic, partition, broker_id): log_dirs.dirs[index].path
            for broker_id, log_dirs in described.items()
            for (topic, partition), index in log_dirs.replica_dirs.items()
        }

    def configs_write(
        self, brokers: dict[int, dict[str, str | None]], topics: dict[str, dict[str, str | None]]
    ) -> None:
        resources = [
            ConfigResource(ResourceType.BROKER, str(b), incremental_configs=_entries(values))
            for b, values in brokers.items()
            if values
        ] + [
            ConfigResource(ResourceType.TOPIC, t, incremental_configs=_entries(values))
            for t, values in topics.items()
            if values
        ]
        if not resources:
            return
        failures = []
        denied = False
        # One request per resource: broker configs go to that very broker.
        for resource in resources:
            future = self.admin.incremental_alter_configs([resource])[resource]
            try:
                future.result(timeout=self.timeout + 5)
            except KafkaException as exc:
                if resource.restype == ResourceType.TOPIC and "UNKNOWN_TOPIC" in str(exc):
                    continue  # topic deleted meanwhile: nothing left to configure
                kind = resource.restype.name.lower()
                api = f"IncrementalAlterConfigs({kind})"
                text = kafka_error_text(api=api, error=exc, resource=resource.name)
                failures.append(f"{kind} {resource.name}: {text}")
                denied = denied or authorization_denied(exc)
        if failures:
            self._renew()
            raise (KafkaOpNotAuthorized if denied else KafkaOpError)("; ".join(failures))

    def broker_rates_wait(self, brokers: list[int], rate: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        pending = set(brokers)
        while pending:
            for broker in sorted(pending):
                resource = ConfigResource(ResourceType.BROKER, str(broker))
                try:
                    entries = self._wait(
                        self.admin.describe_configs([resource])[resource],
                        api="DescribeConfigs(broker)",
                    )
                except KafkaOpError:
                    continue
                values = {
                    k: entries[k].value if k in entries else None for k in BROKER_THROTTLE_KEYS
                }
                if all(v == rate for v in values.values()):
                    pending.discard(broker)
            if pending and time.monotonic() > deadline:
                return False
            if pending:
                time.sleep(0.2)
        return True

    def leaders_elect(
        self, keys: list[PartitionKey], unclean: bool = False
    ) -> dict[PartitionKey, str | None]:
        if not keys:
            return {}
        kind = ElectionType.UNCLEAN if unclean else ElectionType.PREFERRED
        # No kwargs: confluent-kafka 2.16's binding rejects request_timeout here.
        future = self.admin.elect_leaders(kind, [TopicPartition(t, p) for t, p in keys])
        results = self._wait(future, api="ElectLeaders")
        out: dict[PartitionKey, str | None] = {}
        for tp, error in results.items():
            # ELECTION_NOT_NEEDED: the preferred replica already leads.
            name = None if error is None else _error_name(error)
            out[(tp.topic, tp.partition)] = None if name == "ELECTION_NOT_NEEDED" else name
        return out

    def replica_sizes(self) -> dict[tuple[str, int, int], int]:
        try:
            return kafka_python_adapter.replica_sizes_describe(connection=self.connection)
        except Exception as exc:
            raise _op_error(api="DescribeLogDirs", error=exc) from exc

    def replica_future_sizes(self) -> dict[tuple[str, int, int], int]:
        try:
            return kafka_python_adapter.future_replica_sizes_describe(connection=self.connection)
        except Exception as exc:
            raise _op_error(api="DescribeLogDirs", error=exc) from exc


def _error_name(error) -> str:
    inner = error.args[0] if isinstance(error, KafkaException) and error.args else error
    return inner.name() if hasattr(inner, "name") else str(inner)


def _entries(values: dict[str, str | None]) -> list[ConfigEntry]:
    return [
        ConfigEntry(
            key,
            value if value is not None else "",
            incremental_operation=(
                AlterConfigOpType.SET if value is not None else AlterConfigOpType.DELETE
            ),
        )
        for key, value in values.items()
    ]
