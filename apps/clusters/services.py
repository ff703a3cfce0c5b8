"""Keep the cluster model in step with the real Kafka cluster."""

import logging
from dataclasses import dataclass, field
from datetime import datetime

from confluent_kafka import KafkaError, KafkaException, TopicCollection
from confluent_kafka.admin import AdminClient
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .authorization import authorization_denied, cluster_acl_gaps_text, missing_acl_text
from .backoff import cluster_backoff_clear, cluster_backoff_fail
from .crypto import SecretDecryptError
from .kafka_clients import ConnectionErrors, admin_client_create, client_timeouts
from .models import Broker, Cluster, ClusterRound, Partition, Topic
from .rounds import round_lease
from .signals import broker_state_changed, cluster_reachability_changed, cluster_synced

logger = logging.getLogger(__name__)


class ClusterNotAuthorized(Exception):
    """The principal lacks an ACL the sync needs; the message names it."""


class ClusterUnreachable(Exception):
    """The cluster did not answer an admin request in time."""


@dataclass(frozen=True)
class BrokerState:
    node_id: int
    host: str
    port: int
    rack: str | None


@dataclass(frozen=True)
class PartitionState:
    index: int
    leader: int | None
    replicas: list[int]
    isr: list[int]


@dataclass(frozen=True)
class TopicState:
    name: str
    internal: bool
    partitions: list[PartitionState]


@dataclass(frozen=True)
class ClusterState:
    """What one round of admin requests saw; brokers are the live ones only."""

    cluster_id: str
    controller_id: int | None
    brokers: list[BrokerState]
    topics: list[TopicState] = field(default_factory=list)
    # AclOperation names the principal holds on the Cluster; None: not known (fakes).
    cluster_operations: frozenset[str] | None = None
    # Listed but not describable this round; their rows are kept as they are.
    unsettled_topics: list[str] = field(default_factory=list)


def cluster_state_read(*, admin: AdminClient, timeout: float | None = None) -> ClusterState:
    """Read live brokers and every topic's partitions with describe_cluster/describe_topics."""
    timeout = timeout if timeout is not None else settings.KAFKA_REQUEST_TIMEOUT
    # Metadata first, bounded by the connect timeout (plus a moment for the answer): a
    # dead or unroutable address is given up on in seconds, not a request timeout.
    probe = min(timeout, client_timeouts().connect + 1.0)
    api, resource = "Metadata", ""  # the request under way, for a denial's message
    try:
        names = sorted(admin.list_topics(timeout=probe).topics)
        api = "DescribeCluster"
        description = admin.describe_cluster(
            include_authorized_operations=True, request_timeout=timeout
        ).result(timeout=timeout + 5)
        api = "DescribeTopics"
        futures = (
            admin.describe_topics(TopicCollection(names), request_timeout=timeout) if names else {}
        )
        topics, unsettled = [], []
        for name in names:
            resource = name
            try:
                topics.append(_topic_state(futures[name].result(timeout=timeout + 5)))
            except KafkaException as exc:
                # Created or deleted between the two requests: brokers' metadata
                # propagates asynchronously. Leave it as it was until the next round.
                if exc.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                    raise
                unsettled.append(name)
    except (KafkaException, TimeoutError) as exc:
        if authorization_denied(exc):
            raise ClusterNotAuthorized(missing_acl_text(api=api, resource=resource)) from exc
        # Since Python 3.11 concurrent.futures.TimeoutError is TimeoutError: caught here too.
        raise ClusterUnreachable(_error_text(exc)) from exc
    brokers = [
        BrokerState(node_id=n.id, host=n.host, port=n.port, rack=n.rack or None)
        for n in description.nodes
    ]
    controller = description.controller.id if description.controller else None
    # Asked for, so always reported; confluent-kafka gives None for an empty set.
    operations = frozenset(op.name for op in description.authorized_operations or ())
    return ClusterState(
        cluster_id=description.cluster_id or "",
        controller_id=controller,
        brokers=sorted(brokers, key=lambda b: b.node_id),
        topics=topics,
        unsettled_topics=unsettled,
        cluster_operations=operations,
    )


def _topic_state(description) -> TopicState:
    partitions = []
    for p in description.partitions:
        leader = p.leader.id if p.leader is not None and p.leader.id >= 0 else None
        partitions.append(
            PartitionState(
                index=p.id,
                leader=leader,
                replicas=[n.id for n in p.replicas],
                isr=[n.id for n in p.isr],
            )
        )
    return TopicState(
        name=description.name,
        internal=bool(description.is_internal),
        partitions=sorted(partitions, key=lambda p: p.index),
    )


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, KafkaException) and exc.args:
        error = exc.args[0]
        text = getattr(error, "str", lambda: str(error))()
        return text or str(error)
    return str(exc) or exc.__class__.__name__


@transaction.atomic
def cluster_state_apply(*, cluster: Cluster, state: ClusterState, now: datetime) -> None:
    """Make the models match `state`. Idempotent; brokers are never deleted."""
    was_unreachable = not cluster.reachable
    cluster.kafka_cluster_id = state.cluster_id
    cluster.controller_id = state.controller_id
    cluster.last_synced_at = now
    cluster.last_sync_error = ""
    cluster.last_sync_error_at = None
    if state.cluster_operations is not None:
        cluster.access_warning = cluster_acl_gaps_text(authorized=set(state.cluster_operations))
    # Only what a sync owns: a full save would undo an edit made while it ran.
    cluster.save(
        update_fields=[
            "kafka_cluster_id",
            "controller_id",
            "last_synced_at",
            "last_sync_error",
            "last_sync_error_at",
            "access_warning",
        ]
    )

    _brokers_apply(cluster=cluster, state=state, now=now)
    _topics_apply(cluster=cluster, state=state)
    if was_unreachable:
        cluster_reachability_changed.send(
            sender=Cluster, cluster=cluster, reachable=True, error="", at=now
        )


def _brokers_apply(*, cluster: Cluster, state: ClusterState, now: datetime) -> None:
    known = {b.node_id: b for b in cluster.brokers.all()}
    live = {b.node_id: b for b in state.brokers}
    # Replicas may name brokers that are down and were never seen alive by us.
    referenced = {r for t in state.topics for p in t.partitions for r in p.replicas}

    for node_id, seen in live.items():
        broker = known.get(node_id)
        if broker is None:
            Broker.objects.create(
                cluster=cluster,
                node_id=node_id,
                host=seen.host,
                port=seen.port,
                rack=seen.rack,
                alive=True,
                first_seen=now,
                last_seen=now,
            )
            continue
        was_alive = broker.alive
        broker.host, broker.port, broker.rack = seen.host, seen.port, seen.rack
        broker.alive = True
        broker.last_seen = now
        broker.save(update_fields=["host", "port", "rack", "alive", "last_seen"])
        if not was_alive:
            broker_state_changed.send(
                sender=Broker, cluster=cluster, node_id=node_id, alive=True, at=now
            )

    for node_id, broker in known.items():
        if node_id not in live and broker.alive:
            # Keep last_seen: it says when the broker went away.
            broker.alive = False
            broker.save(update_fields=["alive"])
            broker_state_changed.send(
                sender=Broker, cluster=cluster, node_id=node_id, alive=False, at=now
            )

    for node_id in sorted(referenced - live.keys() - known.keys()):
        Broker.objects.create(
            cluster=cluster, node_id=node_id, alive=False, first_seen=now, last_seen=None
        )


def _topics_apply(*, cluster: Cluster, state: ClusterState) -> None:
    existing = {t.name: t for t in cluster.topics.all()}
    seen_names = {t.name for t in state.topics} | set(state.unsettled_topics)
    cluster.topics.exclude(name__in=seen_names).delete()

    for topic_state in state.topics:
        topic = existing.get(topic_state.name)
        if topic is None:
            topic = Topic.objects.create(
                cluster=cluster, name=topic_state.name, internal=topic_state.internal
            )
        elif topic.internal != topic_state.internal:
            topic.internal = topic_state.internal
            topic.save(update_fields=["internal"])
        _partitions_apply(topic=topic, partitions=topic_state.partitions)


def _partitions_apply(*, topic: Topic, partitions: list[PartitionState]) -> None:
    current = {p.index: p for p in topic.partitions.all()}
    indexes = {p.index for p in partitions}
    topic.partitions.exclude(index__in=indexes).delete()
    to_create, to_update = [], []
    for p in partitions:
        values = {
            "leader": p.leader,
            "replicas": p.replicas,
            "isr": p.isr,
            "offline": p.leader is None,
            "under_replicated": len(p.isr) < len(p.replicas),
        }
        row = current.get(p.index)
        if row is None:
            to_create.append(Partition(topic=topic, index=p.index, **values))
        elif any(getattr(row, k) != v for k, v in values.items()):
            for k, v in values.items():
                setattr(row, k, v)
            to_update.append(row)
    Partition.objects.bulk_create(to_create)
    Partition.objects.bulk_update(
        to_update, ["leader", "replicas", "isr", "offline", "under_replicated"]
    )


def cluster_sync_error_record(*, cluster: Cluster, error: str, now: datetime) -> None:
    """Keep the last known state; only say why this round failed."""
    was_reachable = cluster.reachable
    Cluster.objects.filter(pk=cluster.pk).update(last_sync_error=error, last_sync_error_at=now)
    cluster.last_sync_error, cluster.last_sync_error_at = error, now
    if was_reachable:
        cluster_reachability_changed.send(
            sender=Cluster, cluster=cluster, reachable=False, error=error, at=now
        )


def cluster_sync(*, cluster: Cluster, admin: AdminClient | None = None) -> bool:
    """One sync round for one cluster. Returns False when it was unreachable or when
    the previous round still runs (this one is then skipped and counted)."""
    with round_lease(cluster=cluster, kind=ClusterRound.SYNC) as lease:
        if lease is None:
            return False
        return _cluster_sync_round(cluster=cluster, admin=admin)


def _cluster_sync_round(*, cluster: Cluster, admin: AdminClient | None) -> bool:
    was_reachable = cluster.reachable
    errors = ConnectionErrors() if admin is None else None
    try:
        admin = admin or admin_client_create(connection=cluster.connection, errors=errors)
        state = cluster_state_read(admin=admin)
    except ClusterNotAuthorized as exc:
        # Reachable, so no backoff; the message names the operation and resource. One
        # warning while the message stays the same, not one per round.
        log = logger.warning if cluster.last_sync_error != str(exc) else logger.debug
        log("cluster %s: %s", cluster.name, exc)
        cluster_sync_error_record(cluster=cluster, error=str(exc), now=timezone.now())
        return False
    except (SecretDecryptError, ClusterUnreachable) as exc:
        # SecretDecryptError: this cluster's secrets need a key we lack.
        error = str(exc) if isinstance(exc, SecretDecryptError) else f"unreachable: {exc}"
        if isinstance(exc, ClusterUnreachable) and errors is not None:
            # A wrong password or an unknown CA: say that, not "transport failure".
            error = errors.drained(admin) or error
        now = timezone.now()
        cluster_sync_error_record(cluster=cluster, error=error, now=now)
        cluster_backoff_fail(cluster=cluster, now=now)
        # One warning when it starts failing; the rounds after it only at DEBUG.
        log = logger.warning if was_reachable else logger.debug
        log("cluster %s: %s (next try in %s)", cluster.name, error, _until(cluster, now))
        return False
    cluster_state_apply(cluster=cluster, state=state, now=timezone.now())
    cluster_backoff_clear(cluster=cluster)
    if not was_reachable:
        logger.warning("cluster %s: reachable again", cluster.name)
    # Robust: a listener's failure (e.g. a Redis outage for live pages) can't fail a sync.
    cluster_synced.send_robust(sender=Cluster, cluster=cluster)
    return True


def _until(cluster: Cluster, now: datetime) -> str:
    seconds = (cluster.next_sync_at - now).total_seconds() if cluster.next_sync_at else 0
    return f"{seconds:.0f} s"


def cluster_register(*, name: str, bootstrap_servers: str) -> Cluster:
    """Create or update a cluster by name; an existing one keeps its security settings."""
    cluster, _ = Cluster.objects.update_or_create(
        name=name, defaults={"bootstrap_servers": bootstrap_servers}
    )
    return cluster
