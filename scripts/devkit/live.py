"""Helpers for the tests and benchmarks on the real dev cluster: topics with a chosen
placement, a registered cluster, a consumer that reads everything back, placements,
and checks for leftovers (the acks=all producer is devkit.producer's)."""

import time
import uuid
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewTopic, OffsetSpec

from apps.clusters.models import Cluster
from apps.clusters.services import cluster_register, cluster_sync
from apps.kafka_layer.clients import client_config_build
from apps.kafka_layer.kafka_python_adapter import reassignments_list
from apps.plans.kafka_ops import BROKER_THROTTLE_KEYS, TOPIC_THROTTLE_KEYS
from apps.plans.services import policy_get, policy_update
from devkit.polling import wait_until

Key = tuple[str, int]


def topic_name(kind: str) -> str:
    return f"it-plans-{kind}-{uuid.uuid4().hex[:8]}"


def topic_create(
    admin: AdminClient, name: str, *, assignment=None, partitions=0, rf=2, config=None
) -> None:
    """Create the topic and wait until every broker's metadata shows it with leaders."""
    if assignment is not None:
        new = NewTopic(name, num_partitions=len(assignment), replica_assignment=assignment)
    else:
        new = NewTopic(name, num_partitions=partitions, replication_factor=rf)
    admin.create_topics([new])[name].result(30)
    count = len(assignment) if assignment is not None else partitions
    topics_created_wait(admin, [name], count, config=config)


def _broker_admins(admin: AdminClient, config: Mapping[str, Any] | None) -> list[AdminClient]:
    """A fresh client per broker the cluster lists, bootstrapped on that broker alone, so
    that its metadata requests are answered by that broker."""
    brokers = admin.list_topics(timeout=10).brokers.values()
    return [
        AdminClient(
            {
                **(config or {}),
                "bootstrap.servers": f"{b.host}:{b.port}",
                "socket.connection.setup.timeout.ms": 2000,
            }
        )
        for b in brokers
    ]


def topics_created_wait(
    admin: AdminClient,
    names: Iterable[str],
    partitions: int | Mapping[str, int],
    *,
    config: Mapping[str, Any] | None = None,
    timeout: float = 60,
) -> None:
    """Wait until every broker's metadata shows each topic with `partitions` partitions
    (one count for all, or a count per name), each with a leader.

    After `create_topics()` (or `create_partitions()`) returns, only the controller is
    sure to know the change; a broker whose metadata lags answers a client as if the
    topic did not exist yet. `config`: client settings beside the bootstrap servers
    (e.g. a secured cluster's)."""
    names = list(names)
    want = partitions if isinstance(partitions, Mapping) else dict.fromkeys(names, partitions)

    def everywhere() -> bool:
        for client in _broker_admins(admin, config):
            topics = client.list_topics(timeout=10).topics
            for name in names:
                meta = topics.get(name)
                if (
                    meta is None
                    or meta.error is not None
                    or len(meta.partitions) != want[name]
                    or any(p.leader < 0 for p in meta.partitions.values())
                ):
                    return False
        return True

    wait_until(
        everywhere,
        timeout,
        0.2,
        what=f"every broker's metadata shows {names} with leaders",
        retry_on=(KafkaException,),
    )


def topics_deleted_wait(
    admin: AdminClient,
    names: Iterable[str],
    *,
    config: Mapping[str, Any] | None = None,
    timeout: float = 60,
) -> None:
    """Wait until no broker's metadata lists any of the topics any more."""
    names = list(names)

    def nowhere() -> bool:
        for client in _broker_admins(admin, config):
            topics = client.list_topics(timeout=10).topics
            if any(name in topics for name in names):
                return False
        return True

    wait_until(
        nowhere,
        timeout,
        0.2,
        what=f"no broker's metadata lists {names}",
        retry_on=(KafkaException,),
    )


def cluster_registered(bootstrap: str, user, topics: list[str], **policy) -> Cluster:
    """A synced cluster whose balancer policy covers only `topics` (others' are left alone)."""
    cluster = cluster_register(name=f"it-plans-{uuid.uuid4().hex[:6]}", bootstrap_servers=bootstrap)
    assert cluster_sync(cluster=cluster), cluster.last_sync_error
    policy_update(
        policy=policy_get(cluster=cluster),
        actor=user,
        changes={"topics_include": topics, **policy},
    )
    return cluster


def topics_delete(admin: AdminClient, names: list[str]) -> None:
    if not names:
        return
    for future in admin.delete_topics(names).values():
        try:
            future.result(30)
        except Exception:  # already gone
            pass


def fill(bootstrap: str, topic: str, partitions: int, per_partition_bytes: int) -> None:
    """Write about `per_partition_bytes` to every partition (1 KiB records)."""
    producer = Producer(
        client_config_build(bootstrap_servers=bootstrap, extra={"acks": "all", "linger.ms": 20})
    )
    payload = b"x" * 1024
    for p in range(partitions):
        for _ in range(per_partition_bytes // 1024):
            while True:
                try:
                    producer.produce(topic, payload, partition=p)
                    break
                except BufferError:
                    producer.poll(0.05)
        producer.poll(0)
    assert producer.flush(60) == 0


def consume_all(bootstrap: str, topic: str, partitions: int) -> dict[int, dict[int, str]]:
    """Every record's key by its offset, per partition, from the start to the current end."""
    admin = AdminClient(client_config_build(bootstrap_servers=bootstrap))
    ends = admin.list_offsets(
        {TopicPartition(topic, p): OffsetSpec.latest() for p in range(partitions)}
    )
    end = {tp.partition: f.result(30).offset for tp, f in ends.items()}
    config = client_config_build(bootstrap_servers=bootstrap)
    config.update({"group.id": f"it-plans-{uuid.uuid4().hex[:8]}", "enable.auto.commit": False})
    consumer = Consumer(config)
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    keys: dict[int, dict[int, str]] = defaultdict(dict)
    position = {p: 0 for p in range(partitions)}
    deadline = time.monotonic() + 120
    while any(position[p] < end[p] for p in range(partitions)):
        assert time.monotonic() < deadline, f"consumed {position} of {end}"
        for msg in consumer.consume(1000, timeout=1.0):
            if msg.error():
                continue
            keys[msg.partition()][msg.offset()] = msg.key().decode()
            position[msg.partition()] = msg.offset() + 1
    consumer.close()
    return keys


def end_offsets(admin: AdminClient, keys: list[Key]) -> dict[Key, int]:
    def listed() -> dict[Key, int]:
        futures = admin.list_offsets({TopicPartition(t, p): OffsetSpec.latest() for t, p in keys})
        return {(tp.topic, tp.partition): f.result(30).offset for tp, f in futures.items()}

    # Right after a leader change the new leader may answer OFFSET_NOT_AVAILABLE a moment.
    return wait_until(listed, 10, what="end offsets", retry_on=(KafkaException,))


# For a long-lived admin client while brokers stop: the live brokers learnt every second,
# not every 5 minutes, so controller-bound requests never wait on a dead one for long.
FRESH_METADATA = {"topic.metadata.refresh.interval.ms": 1000}


def placement(admin: AdminClient, topics: list[str]) -> dict[Key, tuple[list[int], list[int], int]]:
    """(replicas, isr, leader) per partition, straight from Kafka."""
    from confluent_kafka import TopicCollection

    def described() -> dict[Key, tuple[list[int], list[int], int]]:
        out = {}
        for name, future in admin.describe_topics(TopicCollection(topics)).items():
            for p in future.result(30).partitions:
                out[(name, p.id)] = (
                    [n.id for n in p.replicas],
                    [n.id for n in p.isr],
                    p.leader.id if p.leader is not None else -1,
                )
        return out

    # A broker whose metadata lags (e.g. just restarted by another test session) may not
    # know a new topic for a moment, and on a loaded machine the controller can keep an
    # answer waiting past the client's own timeout ("Timed out waiting for controller",
    # seen in a full run at load 7-10): both are "not yet".
    return wait_until(described, 60, what=f"placement of {topics}", retry_on=(KafkaException,))


def replicas_in_sync(
    admin: AdminClient, topic: str, timeout: float
) -> dict[Key, tuple[list[int], list[int], int]]:
    """The topic's placement once every replica of every partition is in sync."""

    def in_sync() -> dict[Key, tuple[list[int], list[int], int]]:
        now = placement(admin, [topic])
        return now if all(sorted(isr) == sorted(r) for r, isr, _ in now.values()) else {}

    return wait_until(in_sync, timeout, what="every replica in sync")


def throttles_found(admin: AdminClient, brokers: list[int], topics: list[str]) -> dict:
    """Throttle settings present on the brokers (dynamic) and topics; empty when clean."""
    found = {}
    resources = [ConfigResource("broker", str(b)) for b in brokers] + [
        ConfigResource("topic", t) for t in topics
    ]
    for resource in resources:
        # One resource per request: librdkafka sends broker resources to that broker.
        try:
            entries = admin.describe_configs([resource])[resource].result(30)
        except Exception as exc:
            if "UNKNOWN_TOPIC" in str(exc) or resource.restype.name == "BROKER":
                continue  # a deleted topic or a stopped broker
            raise
        keys = BROKER_THROTTLE_KEYS if resource.restype.name == "BROKER" else TOPIC_THROTTLE_KEYS
        for key in keys:
            entry = entries.get(key)
            if entry is None:
                continue
            dynamic = entry.source in (
                ConfigSource.DYNAMIC_BROKER_CONFIG.value,
                ConfigSource.DYNAMIC_TOPIC_CONFIG.value,
            )
            if dynamic and entry.value:
                found[f"{resource.name}:{key}"] = entry.value
    return found


def throttles_set(admin: AdminClient, topics: list[str], timeout: float = 10) -> dict:
    """The throttles found once the brokers show some (dynamic configs arrive
    asynchronously)."""
    return wait_until(
        lambda: throttles_found(admin, [1, 2, 3], topics), timeout, what="throttles set"
    )


def plan_targets(plan) -> dict[Key, list[int]]:
    """Where the plan moves each partition it moves."""
    return {(e["topic"], e["partition"]): e["replicas"] for e in plan.reassignment["partitions"]}


def in_flight(bootstrap: str, topics: list[str]) -> dict:
    return {
        k: v for k, v in reassignments_list(bootstrap_servers=bootstrap).items() if k[0] in topics
    }


def no_throttles_left(admin: AdminClient, topics: list[str], timeout: float = 10) -> None:
    """Waits out config propagation, then fails naming any throttle still set."""
    try:
        wait_until(lambda: not throttles_found(admin, [1, 2, 3], topics), timeout)
    except AssertionError:
        left = throttles_found(admin, [1, 2, 3], topics)
        raise AssertionError(f"throttles left behind: {left}") from None


def leftovers_clean(bootstrap: str, topics: list[str]) -> None:
    """Test teardown safety net: whatever a failed test left (in-flight reassignments of
    its topics, throttles of its executions) is removed, so the shared cluster stays clean."""
    from apps.kafka_layer.kafka_python_adapter import reassignments_alter
    from apps.plans.executor import execution_fail
    from apps.plans.models import Execution, PlanState

    for execution in Execution.objects.select_related("plan", "plan__cluster"):
        plan = execution.plan
        if plan.state == PlanState.EXECUTING:
            execution_fail(plan=plan, error="test teardown")
        elif execution.throttle_applied:
            from apps.plans.executor.throttles import throttles_remove
            from apps.plans.kafka_ops import LiveKafka

            throttles_remove(
                plan=plan, execution=execution, kafka=LiveKafka(connection=plan.cluster.connection)
            )
    stuck = in_flight(bootstrap, topics)
    if stuck:
        reassignments_alter(bootstrap_servers=bootstrap, moves=dict.fromkeys(stuck))
