"""Reads of the synced cluster model: which clusters a user may see, their brokers,
topics and partitions."""

from dataclasses import dataclass

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.core.paginator import Page, Paginator
from django.db.models import Count, QuerySet

from apps.access.selectors import ALL_CLUSTERS, cluster_ids_with_perm, user_holds_anywhere
from apps.core.json_lists import json_list_has

from .models import Broker, Cluster, ClusterRound, Partition, Topic

User = AbstractBaseUser | AnonymousUser

# Seeing a cluster (its pages, websockets and API) takes this permission, which every
# role carries on the clusters it is granted on (apps/access).
VIEW_CLUSTER_PERMISSION = "clusters.view_cluster"


def user_may_see_clusters(*, user: User) -> bool:
    """Whether the user sees any cluster at all (the dashboard's and the API's door)."""
    return user_holds_anywhere(user=user, perm=VIEW_CLUSTER_PERMISSION)


def cluster_ids_with(*, user: User, perm: str) -> set[int] | None:
    """The ids of the clusters where the user holds `perm`; None: every cluster."""
    return cluster_ids_with_perm(user=user, perm=perm)


def clusters_with(*, user: User, perm: str) -> QuerySet[Cluster]:
    """The clusters where the user holds `perm`, by name."""
    ids = cluster_ids_with_perm(user=user, perm=perm)
    clusters = Cluster.objects.order_by("name")
    return clusters if ids is ALL_CLUSTERS else clusters.filter(pk__in=ids)


def clusters_visible_list(*, user: User) -> QuerySet[Cluster]:
    """The clusters this user may see, by name: those they hold a grant on."""
    return clusters_with(user=user, perm=VIEW_CLUSTER_PERMISSION)


def cluster_visible_get(*, user: User, name: str) -> Cluster | None:
    """The named cluster, or None when it does not exist or the user may not see it
    (the two read the same: no trace of a cluster without a grant)."""
    return clusters_visible_list(user=user).filter(name=name).first()


@dataclass(frozen=True)
class LogDirRow:
    """One disk (log dir) of a broker as the last sync that read it saw it; bytes."""

    path: str
    used: int  # of the replicas in it
    total: int | None  # of its volume; None: Kafka did not say (before v4, offline)
    usable: int | None  # free on its volume for Kafka
    online: bool
    used_pct: float | None  # used over total


@dataclass(frozen=True)
class BrokerRow:
    broker: Broker
    replicas: int
    leaders: int
    replica_skew_pct: float | None
    leader_skew_pct: float | None
    # Its disks (JBOD: several), sorted by path; None: never read.
    log_dirs: list[LogDirRow] | None = None


def log_dir_rows(*, broker: Broker) -> list[LogDirRow] | None:
    """The broker's disks with their use, from what the sync stored (Broker.log_dirs)."""
    if broker.log_dirs is None:
        return None
    return [
        LogDirRow(
            path=d["path"],
            used=d["used"],
            total=d["total"],
            usable=d["usable"],
            online=d["online"],
            used_pct=d["used"] / d["total"] * 100.0 if d["total"] else None,
        )
        for d in broker.log_dirs
    ]


def _skew(value: int, mean: float) -> float | None:
    # As kafka-ui shows it: deviation from the mean over the live brokers, in percent.
    return None if mean == 0 else (value - mean) / mean * 100.0


def broker_rows_list(*, cluster: Cluster) -> list[BrokerRow]:
    # Counted by the sync (Broker.replicas_count / leaders_count), not read here.
    brokers = list(cluster.brokers.all())
    replicas = {b.node_id: b.replicas_count for b in brokers}
    leaders = {b.node_id: b.leaders_count for b in brokers}
    alive = [b for b in brokers if b.alive] or brokers
    mean_replicas = sum(replicas[b.node_id] for b in alive) / len(alive) if alive else 0.0
    mean_leaders = sum(leaders[b.node_id] for b in alive) / len(alive) if alive else 0.0
    return [
        BrokerRow(
            broker=b,
            replicas=replicas[b.node_id],
            leaders=leaders[b.node_id],
            replica_skew_pct=_skew(replicas[b.node_id], mean_replicas) if b.alive else None,
            leader_skew_pct=_skew(leaders[b.node_id], mean_leaders) if b.alive else None,
            log_dirs=log_dir_rows(broker=b),
        )
        for b in brokers
    ]


@dataclass(frozen=True)
class TopicRow:
    topic: Topic
    partitions: int
    replication_factor: int
    offline: int
    under_replicated: int


def _topic_row(topic: Topic) -> TopicRow:
    return TopicRow(
        topic=topic,
        partitions=topic.partitions_count,
        replication_factor=topic.replication_factor,
        offline=topic.offline_count,
        under_replicated=topic.under_replicated_count,
    )


def topic_rows_list(*, cluster: Cluster, include_internal: bool = True) -> list[TopicRow]:
    """Every topic by name, with its counts as the sync left them."""
    topics = cluster.topics.all()
    if not include_internal:
        topics = topics.filter(internal=False)
    return [_topic_row(t) for t in topics]


TOPICS_PAGE_SIZE = 50
_TOPIC_ROW_FIELDS = (
    "cluster_id",
    "name",
    "internal",
    "partitions_count",
    "replication_factor",
    "offline_count",
    "under_replicated_count",
)


def topic_rows_page(
    *, cluster: Cluster, search: str = "", page: int | str | None = 1, size: int = TOPICS_PAGE_SIZE
) -> Page:
    """One page of topic rows, those with offline and then under-replicated partitions
    first, then the largest: what an operator looks for among thousands of topics.
    Counted by the sync (Topic.partitions_count and the others): no partition is read."""
    # Not the packed placement (every partition of the topic): the page sorts all the
    # cluster's topics to show 50, and the sort would carry it along.
    topics = cluster.topics.only(*_TOPIC_ROW_FIELDS).order_by(
        "-offline_count", "-under_replicated_count", "-partitions_count", "name"
    )
    if search:
        topics = topics.filter(name__icontains=search)
    shown = Paginator(topics, size).get_page(page)
    shown.object_list = [_topic_row(t) for t in shown.object_list]
    return shown


def partitions_filter(
    *, cluster: Cluster, topic: str = "", broker: int | None = None
) -> QuerySet[Partition]:
    """Partitions of a cluster, optionally of one topic and / or with a replica on a broker."""
    # The topic's name only: not its packed placement (every partition of the topic,
    # up to hundreds of KB), which select_related would read once per partition row.
    partitions = (
        Partition.objects.filter(topic__cluster=cluster)
        .select_related("topic")
        .defer("topic__placement")
    )
    if topic:
        partitions = partitions.filter(topic__name=topic)
    if broker is not None:
        partitions = partitions.filter(
            json_list_has(model=Partition, field="replicas", value=broker)
        )
    return partitions.order_by("topic__name", "index")


def cluster_rounds_list(*, cluster: Cluster) -> list[ClusterRound]:
    """The cluster's sync, sample and aggregation rounds: skips, last failure, degradation."""
    return list(ClusterRound.objects.filter(cluster=cluster).order_by("kind"))


def clusters_list() -> list[Cluster]:
    """Every registered cluster, by name (monitoring reads them all, whoever asks)."""
    return list(Cluster.objects.order_by("name"))


def broker_counts_by_liveness() -> dict[tuple[int, bool], int]:
    """{(cluster id, alive): brokers} over every cluster."""
    rows = Broker.objects.values_list("cluster_id", "alive").annotate(n=Count("pk"))
    return {(cluster_id, alive): n for cluster_id, alive, n in rows.order_by()}


def rounds_all_list() -> list[ClusterRound]:
    """Every cluster's rounds, with their cluster."""
    return list(ClusterRound.objects.select_related("cluster").order_by("cluster__name", "kind"))
