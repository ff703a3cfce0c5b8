"""The one place that uses kafka-python.

confluent-kafka has no AlterPartitionReassignments, ListPartitionReassignments
or DescribeLogDirs; kafka-python's KafkaAdminClient has them. Everything else
goes through confluent-kafka (see `clients`).
"""

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from itertools import islice
from typing import Any

from kafka import KafkaAdminClient
from kafka import errors as kafka_errors
from kafka.protocol.admin.cluster import DescribeLogDirsRequest, DescribeLogDirsResponse
from kafka.protocol.api_header import RequestHeader

from .clients import client_timeouts, connection_resolve
from .connection import REDACTED, ConnectionSettings, kafka_python_config
from .kafka_python_noise import connection_noise_mute
from .log_dirs_decode import MAX_VERSION as LOG_SIZES_MAX_VERSION
from .log_dirs_decode import LogDir, LogSizes, log_dir_of_replicas, log_sizes_decode


class _PasswordRedactor(logging.Filter):
    """KafkaAdminClient logs its whole configuration at DEBUG, password included."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, Mapping):
            record.args = _redacted(record.args)
        elif isinstance(record.args, tuple):
            record.args = tuple(_redacted(a) if isinstance(a, Mapping) else a for a in record.args)
        return True


def _redacted(values: Mapping) -> dict:
    # A copy: the mapping logged may be the very configuration the client uses.
    return {k: REDACTED if "password" in str(k) and v else v for k, v in values.items()}


logging.getLogger("kafka.admin.client").addFilter(_PasswordRedactor())
connection_noise_mute()


class _ClosingAdminClient(KafkaAdminClient):
    """KafkaAdminClient that stops what it started when bootstrapping fails.

    kafka-python 3.0.12 starts its IO thread in __init__ and then bootstraps; when
    bootstrapping fails (an unreachable cluster) __init__ raises and nothing can close
    the half-built client: its thread runs forever, and with it the failed bootstrap's
    exception, whose traceback keeps our callers' frames (and any confluent-kafka
    client they hold, reconnecting every second) alive.
    """

    def __init__(self, **configs: Any) -> None:
        try:
            super().__init__(**configs)
        except BaseException:
            if hasattr(self, "_net"):  # the IO thread was started
                self._closed = False  # close() skips a client __init__ never finished
                self.close()
            raise


@contextmanager
def admin_client_open(
    *, connection: ConnectionSettings | None = None, bootstrap_servers: str | None = None
) -> Iterator[KafkaAdminClient]:
    connection = connection_resolve(connection=connection, bootstrap_servers=bootstrap_servers)
    config: dict[str, Any] = kafka_python_config(
        connection, timeouts=client_timeouts(), client_id="kafka-balancer"
    )
    client = _ClosingAdminClient(**config)
    try:
        yield client
    finally:
        client.close()


# --- Partition reassignments (used by the plan executor) -----------------------------

PartitionKey = tuple[str, int]


def reassignments_alter(
    *,
    connection: ConnectionSettings | None = None,
    bootstrap_servers: str | None = None,
    moves: dict[PartitionKey, list[int] | None],
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
    with admin_client_open(connection=connection, bootstrap_servers=bootstrap_servers) as client:
        answered = client.alter_partition_reassignments(request)
    result: dict[PartitionKey, str | None] = {key: "no response" for key in moves}
    for tp, error in answered.items():
        result[(tp.topic, tp.partition)] = None if error is None else error.__name__
    return result


def reassignments_list(
    *,
    connection: ConnectionSettings | None = None,
    bootstrap_servers: str | None = None,
    partitions: list[PartitionKey] | None = None,
) -> dict[PartitionKey, dict[str, list[int]]]:
    """ListPartitionReassignments: the in-flight ones (all, or among `partitions`).

    Each value has `replicas` (the union Kafka currently lists), `adding` and `removing`.
    """
    from kafka import TopicPartition

    if partitions is not None and not partitions:
        return {}
    wanted = None if partitions is None else [TopicPartition(t, p) for t, p in partitions]
    with admin_client_open(connection=connection, bootstrap_servers=bootstrap_servers) as client:
        listed = client.list_partition_reassignments(wanted)
    return {
        (tp.topic, tp.partition): {
            "replicas": list(info["replicas"]),
            "adding": list(info["adding_replicas"]),
            "removing": list(info["removing_replicas"]),
        }
        for tp, info in listed.items()
    }


ReplicaKey = tuple[str, int, int]  # (topic, partition, broker_id)


def replica_log_dirs_alter(
    *,
    connection: ConnectionSettings | None = None,
    bootstrap_servers: str | None = None,
    targets: dict[ReplicaKey, str],
) -> dict[ReplicaKey, str | None]:
    """AlterReplicaLogDirs: the absolute log dir each (topic, partition, broker) replica
    goes to, one request per broker.

    A broker moves a replica it hosts to that dir (a future replica copies it there) and
    keeps the dir for a replica it does not host yet, until it is created; for one it
    cannot place it answers REPLICA_NOT_AVAILABLE, which the caller re-sends. Returns per
    replica the error name Kafka gave, or None when accepted; one a broker did not answer
    for is "no response".
    """
    from kafka import TopicPartitionReplica

    if not targets:
        return {}
    request = {
        TopicPartitionReplica(topic, partition, broker_id): path
        for (topic, partition, broker_id), path in targets.items()
    }
    with admin_client_open(connection=connection, bootstrap_servers=bootstrap_servers) as client:
        answered = client.alter_replica_log_dirs(request)
    result: dict[ReplicaKey, str | None] = {key: "no response" for key in targets}
    for tpr, error in answered.items():
        accepted = error is None or error is kafka_errors.NoError
        result[(tpr.topic, tpr.partition, tpr.broker_id)] = None if accepted else error.__name__
    return result


class _LogSizesAnswer:
    """How kafka-python's parser reads a DescribeLogDirs answer for log_sizes_describe:
    the response header as kafka-python reads it, the body by log_sizes_decode."""

    def __init__(self, version: int) -> None:
        self._version = version
        self._response = DescribeLogDirsResponse[version]

    def parse_header(self, data: Any) -> Any:
        return self._response.parse_header(data)

    def decode(self, data: Any) -> LogSizes:
        # `data` is kafka-python's receive buffer, read past the header.
        return log_sizes_decode(data.read(), version=self._version)


class _LogSizesRequestHeader(RequestHeader, init=False):
    __slots__ = ()

    def get_response_class(self) -> _LogSizesAnswer:
        return _LogSizesAnswer(self.request_api_version)


class _LogSizesRequest(DescribeLogDirsRequest, init=False):
    """DescribeLogDirs whose answer is decoded into sizes (log_dirs_decode), not objects.

    kafka-python's parser decodes an answer with the class its request's header names
    (kafka/protocol/parser.py, 3.0.x, pinned); this request's header names
    _LogSizesAnswer. Everything else (version negotiation, encoding, connections,
    throttling) is kafka-python's. Tests decode what kafka-python encodes, every version.
    """

    __slots__ = ()
    header_class = _LogSizesRequestHeader


async def _log_sizes_of_every_broker(client: KafkaAdminClient) -> list[tuple[int, LogSizes]]:
    """[(broker id, its DescribeLogDirs answer as sizes)], asking with topics null.

    What `client.describe_log_dirs()` does, less what at 200k partitions outweighs
    reading the answers: it first reads every topic's metadata (decoded in Python) to
    list each partition in the request, while null asks for every topic and gets the
    same answer (checked on the dev cluster); and it decodes each answer into objects
    and then nested dicts, where a round keeps one number per replica
    (log_dirs_decode). kafka-python keeps no public way to do either, so this is its
    own coroutine (kafka/admin/_cluster.py, 3.0.x, pinned), run by the client's
    manager. Every broker is asked before any answer is awaited: on 270 brokers, one
    round trip instead of 270.
    """
    manager = client._manager
    sent = [
        (
            broker.node_id,
            manager.send(
                _LogSizesRequest(topics=None, max_version=LOG_SIZES_MAX_VERSION),
                node_id=broker.node_id,
            ),
        )
        for broker in manager.cluster.brokers()
    ]
    return [(node_id, await response) for node_id, response in sent]


def _log_dirs_answers(
    *, connection: ConnectionSettings | None, bootstrap_servers: str | None
) -> list[tuple[int, LogSizes]]:
    """Every live broker's DescribeLogDirs answer; a refused one raises its error."""
    with admin_client_open(connection=connection, bootstrap_servers=bootstrap_servers) as client:
        answers = client._manager.run(_log_sizes_of_every_broker, client)
    for broker_id, answer in answers:
        if answer.error_code:
            error = kafka_errors.for_code(answer.error_code)
            raise error(f"DescribeLogDirs on broker {broker_id}")
    return answers


def log_sizes_describe(
    *, connection: ConnectionSettings | None = None, bootstrap_servers: str | None = None
) -> dict[int, dict[PartitionKey, int]]:
    """Bytes on disk of every current replica, by broker: {broker_id: {(topic, partition): size}}.

    One DescribeLogDirs request per live broker, for every topic. Future replicas (a
    move between log dirs in progress) are left out: the current log is what serves
    traffic, and a broker holds one current log per partition. A log dir that is
    offline is left out too: its replicas are unknown, not empty. A broker that
    refuses the request (CLUSTER_AUTHORIZATION_FAILED) raises its error: no sizes are
    known then, not zero. Keyed by broker, as the answers come: merging them into a
    dict per partition adds a large share to this call's time on a large cluster
    (bench/bench_sample_round.py).
    """
    answers = _log_dirs_answers(connection=connection, bootstrap_servers=bootstrap_servers)
    return {broker_id: answer.sizes for broker_id, answer in answers}


@dataclass(frozen=True)
class BrokerLogDirs:
    """One broker's log dirs (JBOD: several) and which of them holds each current replica."""

    # In the order the broker listed them (log_dirs_decode.LogDir: path, error_code,
    # total_bytes, usable_bytes, replicas).
    dirs: tuple[LogDir, ...]
    # {(topic, partition): bytes on disk} of the current replicas of its online dirs,
    # each dir's replicas in a run, in the dirs' order (log_dirs_decode).
    sizes: dict[PartitionKey, int]

    @cached_property
    def replica_dirs(self) -> dict[PartitionKey, int]:
        """{(topic, partition): index in `dirs`} of the same replicas."""
        return log_dir_of_replicas(LogSizes(0, 0, self.sizes, self.dirs))

    def used_bytes(self) -> list[int]:
        """Bytes of the current replicas in each dir (0 for an offline one: unknown)."""
        sizes = iter(self.sizes.values())
        return [sum(islice(sizes, log_dir.replicas)) for log_dir in self.dirs]

    def layout(self) -> tuple:
        """Which replica is in which dir, as a value to compare (and hash) whole: the
        dirs' paths and replica counts and the replicas in order, built in C."""
        return tuple((d.path, d.replicas) for d in self.dirs), tuple(self.sizes)


def log_dirs_describe(
    *, connection: ConnectionSettings | None = None, bootstrap_servers: str | None = None
) -> dict[int, BrokerLogDirs]:
    """Every live broker's log dirs, their capacity and the dir of each current replica,
    from the same DescribeLogDirs requests as log_sizes_describe (one per broker, every
    topic; a refused one raises its error)."""
    answers = _log_dirs_answers(connection=connection, bootstrap_servers=bootstrap_servers)
    return {
        broker_id: BrokerLogDirs(dirs=answer.dirs, sizes=answer.sizes)
        for broker_id, answer in answers
    }


def replica_sizes_describe(
    *, connection: ConnectionSettings | None = None, bootstrap_servers: str | None = None
) -> dict[tuple[str, int, int], int]:
    """Bytes on disk of every replica: {(topic, partition, broker_id): size}
    (log_sizes_describe, keyed by replica)."""
    by_broker = log_sizes_describe(connection=connection, bootstrap_servers=bootstrap_servers)
    return {
        (topic, index, broker_id): size
        for broker_id, per_partition in by_broker.items()
        for (topic, index), size in per_partition.items()
    }


def future_replica_sizes_describe(
    *, connection: ConnectionSettings | None = None, bootstrap_servers: str | None = None
) -> dict[tuple[str, int, int], int]:
    """Bytes so far of every future replica (the copy of a move between the log dirs of
    its broker in progress): {(topic, partition, broker_id): size}, from the same
    DescribeLogDirs requests as log_sizes_describe."""
    answers = _log_dirs_answers(connection=connection, bootstrap_servers=bootstrap_servers)
    return {
        (topic, index, broker_id): size
        for broker_id, answer in answers
        for (topic, index), size in (answer.futures or {}).items()
    }
