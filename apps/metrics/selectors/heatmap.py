"""The brokers x topics heatmap: replica and leader counts, or the newest window's traffic."""

from dataclasses import dataclass, field

from apps.clusters.models import Cluster, Partition

from .windows import partition_loads_latest

HEATMAP_METRICS = {
    # metric: (label, unit)
    "replicas": ("Replicas", "replicas"),
    "leaders": ("Leaders", "leaders"),
    "network_in": ("Bytes in (replication included)", "B/s"),
    "network_out": ("Bytes out (leaders, replication included)", "B/s"),
}


@dataclass(frozen=True)
class Heatmap:
    metric: str
    label: str
    unit: str
    brokers: list[int]
    broker_alive: list[bool]
    topics: list[str]
    # z[topic][broker], in the order of `topics` and `brokers`.
    z: list[list[float]]
    # Where traffic came from: the window end (ISO), or "" for counts / no metrics.
    window_end: str = ""
    # Topics matching the search (the page shows `topics` of them, from `offset`).
    topics_total: int = 0
    offset: int = 0
    # Every matching topic not on this page, summed per broker, and how many they are.
    other: list[float] = field(default_factory=list)
    other_topics: int = 0


HEATMAP_SORTS = ("load", "name")
HEATMAP_LIMIT_MAX = 500


def heatmap_get(
    *,
    cluster: Cluster,
    metric: str = "replicas",
    include_internal: bool = True,
    search: str = "",
    sort: str = "load",
    limit: int = 50,
    offset: int = 0,
) -> Heatmap:
    """Brokers x topics. Counts come from the model; traffic from the newest load window,
    spread as the planner's load model does (BALANCING.md §3) but on the current
    leader: bytes in on every replica, bytes out plus replication on the leader.

    One page of the topics whose name contains `search`: the heaviest first by the
    metric (or by name), `limit` of them from `offset`; the rest are summed into `other`
    so thousands of topics stay readable and the hot spot is on the first page."""
    if sort not in HEATMAP_SORTS:
        raise ValueError(f"unknown sort {sort!r}; one of {', '.join(HEATMAP_SORTS)}")
    limit = max(1, min(limit, HEATMAP_LIMIT_MAX))
    offset = max(0, offset)
    if metric not in HEATMAP_METRICS:
        raise ValueError(f"unknown metric {metric!r}; one of {', '.join(HEATMAP_METRICS)}")
    brokers = list(cluster.brokers.order_by("node_id").values_list("node_id", "alive"))
    broker_ids = [b for b, _ in brokers]
    column = {b: i for i, b in enumerate(broker_ids)}
    topics_qs = cluster.topics.order_by("name")
    if not include_internal:
        topics_qs = topics_qs.filter(internal=False)
    if search:
        topics_qs = topics_qs.filter(name__icontains=search)
    topics = list(topics_qs.values_list("name", flat=True))
    row = {t: i for i, t in enumerate(topics)}
    z = [[0.0] * len(broker_ids) for _ in topics]

    traffic: dict[tuple[str, int], tuple[float, float]] = {}
    window_end = ""
    if metric in ("network_in", "network_out"):
        for topic, index, bytes_in, bytes_out, end in partition_loads_latest(
            cluster=cluster
        ).values_list("topic", "partition", "bytes_in", "bytes_out", "window_end"):
            traffic[(topic, index)] = (bytes_in or 0.0, bytes_out or 0.0)
            window_end = end.isoformat()

    partitions = Partition.objects.filter(topic__cluster=cluster, topic__name__in=topics)
    for topic, index, leader, replica_list in partitions.values_list(
        "topic__name", "index", "leader", "replicas"
    ):
        cells = z[row[topic]]
        if metric == "replicas":
            for b in replica_list:
                if b in column:
                    cells[column[b]] += 1
        elif metric == "leaders":
            if leader in column:
                cells[column[leader]] += 1
        else:
            load = traffic.get((topic, index))
            if load is None:
                continue
            bytes_in, bytes_out = load
            if metric == "network_in":
                for b in replica_list:
                    if b in column:
                        cells[column[b]] += bytes_in
            elif leader in column:
                followers = max(len(replica_list) - 1, 0)
                cells[column[leader]] += bytes_out + bytes_in * followers
    order = list(range(len(topics)))
    if sort == "load":
        order.sort(key=lambda i: (-sum(z[i]), topics[i]))
    shown = order[offset : offset + limit]
    rest = set(order) - set(shown)
    other = [0.0] * len(broker_ids)
    for i in rest:
        for b, value in enumerate(z[i]):
            other[b] += value
    label, unit = HEATMAP_METRICS[metric]
    return Heatmap(
        metric=metric,
        label=label,
        unit=unit,
        brokers=broker_ids,
        broker_alive=[a for _, a in brokers],
        topics=[topics[i] for i in shown],
        z=[z[i] for i in shown],
        window_end=window_end,
        topics_total=len(topics),
        offset=offset,
        other=other if rest else [],
        other_topics=len(rest),
    )
