"""Traffic per broker over the kept windows, for the charts."""

from dataclasses import dataclass
from datetime import datetime

from apps.clusters.models import Cluster

from ..models import BrokerLoad

TRAFFIC_WINDOWS_MAX = 360


@dataclass(frozen=True)
class BrokerTraffic:
    """One series per broker over the kept windows (oldest first)."""

    windows: list[str]  # window ends, ISO
    # broker id -> measure -> values aligned with `windows` (None: not measured).
    series: dict[int, dict[str, list[float | None]]]


def broker_traffic_series(*, cluster: Cluster, windows: int = 60) -> BrokerTraffic:
    """Bytes in / out and messages in as leader per broker (load model, replication
    included) from BrokerLoad, over the newest `windows`."""
    windows = max(1, min(windows, TRAFFIC_WINDOWS_MAX))
    starts = list(
        BrokerLoad.objects.filter(cluster=cluster)
        .order_by("-window_start")
        .values_list("window_start", flat=True)
        .distinct()[:windows]
    )
    starts.reverse()
    if not starts:
        return BrokerTraffic(windows=[], series={})
    position = {s: i for i, s in enumerate(starts)}
    ends: list[str] = [""] * len(starts)
    series: dict[int, dict[str, list[float | None]]] = {}

    def slot(broker: int) -> dict[str, list[float | None]]:
        if broker not in series:
            series[broker] = {
                m: [None] * len(starts) for m in ("network_in", "network_out", "messages_in")
            }
        return series[broker]

    # A window in which no partition's rate could be measured (the first one collected
    # has a single sample) stores broker loads summed from nothing: 0, flagged
    # unmeasured when stored. It is a gap in the charts, not a drop to zero.
    unmeasured: set[datetime] = set()
    for row in BrokerLoad.objects.filter(cluster=cluster, window_start__in=starts).values(
        "broker_id",
        "window_start",
        "window_end",
        "network_in",
        "network_out",
        "messages_in",
        "measured",
    ):
        i = position[row["window_start"]]
        ends[i] = row["window_end"].isoformat()
        s = slot(row["broker_id"])
        if not row["measured"]:
            unmeasured.add(row["window_start"])
            continue
        s["network_in"][i] = row["network_in"]
        s["network_out"][i] = row["network_out"]
        if row["messages_in"] is not None:
            s["messages_in"][i] = row["messages_in"]
    # A dead broker serves nothing: the windows after it last answered show no traffic,
    # whatever the aggregation attributed to its replicas from the synced placement.
    for broker, last_seen in cluster.brokers.filter(alive=False).values_list(
        "node_id", "last_seen"
    ):
        if broker not in series:
            continue
        for i, start in enumerate(starts):
            if start not in unmeasured and (last_seen is None or start >= last_seen):
                for values in series[broker].values():
                    values[i] = 0.0
    return BrokerTraffic(windows=ends, series=dict(sorted(series.items())))
