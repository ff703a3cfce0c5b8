"""One round of admin requests read as a cluster's state: live brokers, every topic's
partitions, the operations the principal holds on the cluster."""

from dataclasses import dataclass, field

from confluent_kafka import KafkaError, KafkaException, TopicCollection
from confluent_kafka.admin import AdminClient
from django.conf import settings

from .authorization import authorization_denied, missing_acl_text
from .clients import client_timeouts


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
