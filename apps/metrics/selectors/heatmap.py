"""The brokers x topics heatmap: replica and leader counts, or the newest window's traffic,
from rows stored per topic (TopicPlacement, TopicLoad), never from every partition."""

from collections.abc import Callable
from dataclasses import dataclass, field

from django.db.models import QuerySet

from apps.clusters.models import Cluster, TopicPlacement

from ..models import BrokerLoad, TopicLoad
from ..window_packing import brokers_unpack

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
    """Brokers x topics. Counts come from the sync's per-topic placement rows; traffic
    from the newest window's per-topic summaries (TopicLoad), spread as the planner's
    load model does (BALANCING.md §3): bytes in on every replica, bytes out plus
    replication on the leader, as placed in that window.

    One page of the topics whose name contains `search`: the heaviest first by the
    metric (or by name), `limit` of them from `offset`; the rest are summed into `other`
    so thousands of topics stay readable and the hot spot is on the first page. Reads
    one small row per topic and the cells of the shown topics only: "other" is the
    brokers' totals less the shown and the filtered-out topics, whichever is fewer."""
    if sort not in HEATMAP_SORTS:
        raise ValueError(f"unknown sort {sort!r}; one of {', '.join(HEATMAP_SORTS)}")
    limit = max(1, min(limit, HEATMAP_LIMIT_MAX))
    offset = max(0, offset)
    if metric not in HEATMAP_METRICS:
        raise ValueError(f"unknown metric {metric!r}; one of {', '.join(HEATMAP_METRICS)}")
    brokers = list(cluster.brokers.order_by("node_id").values_list("node_id", "alive"))
    broker_ids = [b for b, _ in brokers]
    source = _source(cluster=cluster, metric=metric)

    internal = set(cluster.topics.filter(internal=True).values_list("name", flat=True))
    needle = search.lower()
    matching, excluded = [], []
    for name, total in source.totals:
        wanted = (include_internal or name not in internal) and needle in name.lower()
        (matching if wanted else excluded).append((name, total))
    if sort == "load":
        matching.sort(key=lambda row: (-row[1], row[0]))
    else:
        matching.sort(key=lambda row: row[0])
    shown = [name for name, _ in matching[offset : offset + limit]]
    rest = len(matching) - len(shown)

    column = {str(b): i for i, b in enumerate(broker_ids)}
    cells = source.cells(shown)
    z = [_row(cells.get(name, {}), column) for name in shown]
    other: list[float] = []
    if rest:
        shown_set = set(shown)
        rest_names = [name for name, _ in matching if name not in shown_set]
        if source.broker_totals is not None and len(excluded) < len(rest_names):
            # Everything less what is shown and what the filter left out.
            totals = [source.broker_totals.get(b, 0.0) for b in broker_ids]
            subtract = z + [
                _row(c, column) for c in source.cells([n for n, _ in excluded]).values()
            ]
            other = [max(0.0, t - sum(r[i] for r in subtract)) for i, t in enumerate(totals)]
        else:
            other = [0.0] * len(broker_ids)
            for c in source.cells(rest_names).values():
                for i, value in enumerate(_row(c, column)):
                    other[i] += value
    label, unit = HEATMAP_METRICS[metric]
    return Heatmap(
        metric=metric,
        label=label,
        unit=unit,
        brokers=broker_ids,
        broker_alive=[a for _, a in brokers],
        topics=shown,
        z=z,
        window_end=source.window_end,
        topics_total=len(matching),
        offset=offset,
        other=other,
        other_topics=rest,
    )


def _row(cells: dict[str, float], column: dict[str, int]) -> list[float]:
    row = [0.0] * len(column)
    for broker, value in cells.items():
        i = column.get(broker)
        if i is not None:
            row[i] += value
    return row


@dataclass(frozen=True)
class _Source:
    """Where one metric's rows come from: (topic, total) for every topic, the cells
    {broker: value} of the named topics, and each broker's total (None: unknown)."""

    totals: list[tuple[str, float]]
    cells: Callable[[list[str]], dict[str, dict[str, float]]]
    broker_totals: dict[int, float] | None
    window_end: str = ""


_CHUNK = 500


def _cells_reader(
    queryset: QuerySet,
    name_field: str,
    cells_field: str,
    decode: Callable[[object], dict[str, float]] | None = None,
) -> Callable:
    def cells(names: list[str]) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for i in range(0, len(names), _CHUNK):
            chunk = queryset.filter(**{f"{name_field}__in": names[i : i + _CHUNK]})
            rows = chunk.values_list(name_field, cells_field)
            out.update(rows if decode is None else ((n, decode(v)) for n, v in rows))
        return out

    return cells


def _traffic_decoder(*, out: bool) -> Callable[[object], dict[str, float]]:
    """A topic row's packed per-broker traffic as cells {broker: bytes/s}."""

    def decode(packed: object) -> dict[str, float]:
        sums = brokers_unpack(packed=packed)[1 if out else 0]
        return {str(b): v for b, v in sums.items()}

    return decode


def _source(*, cluster: Cluster, metric: str) -> _Source:
    if metric in ("replicas", "leaders"):
        placements = TopicPlacement.objects.filter(topic__cluster=cluster)
        counts = cluster.brokers.values_list("node_id", f"{metric}_count")
        return _Source(
            totals=list(placements.values_list("topic__name", f"{metric}_total")),
            cells=_cells_reader(placements, "topic__name", metric),
            broker_totals={b: float(n) for b, n in counts},
        )
    newest = (
        TopicLoad.objects.filter(cluster=cluster)
        .order_by("-window_start")
        .values_list("window_start", "window_end")
        .first()
    )
    if newest is None:
        return _Source(totals=[], cells=lambda names: {}, broker_totals=None)
    start, end = newest
    loads = TopicLoad.objects.filter(cluster=cluster, window_start=start)
    # The broker windows sum the same load model over every topic (spark_jobs).
    brokers = dict(
        BrokerLoad.objects.filter(cluster=cluster, window_start=start).values_list(
            "broker_id", metric
        )
    )
    return _Source(
        totals=list(loads.values_list("topic", metric)),
        cells=_cells_reader(
            loads, "topic", "brokers", decode=_traffic_decoder(out=metric == "network_out")
        ),
        broker_totals=brokers or None,
        window_end=end.isoformat(),
    )
