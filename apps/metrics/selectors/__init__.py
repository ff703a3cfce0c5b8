"""Reads of the metrics app, one module per concept; import them from here."""

from .heatmap import HEATMAP_LIMIT_MAX, HEATMAP_METRICS, HEATMAP_SORTS, Heatmap, heatmap_get
from .runs import aggregation_runs_recent
from .shared import SHARED_SECONDS, stamp_pushed_note, stamp_token, stamped_answer_get
from .snapshot import cluster_snapshot_build
from .stamp import cluster_state_stamp
from .traffic import TRAFFIC_WINDOWS_MAX, BrokerTraffic, broker_traffic_series
from .windows import (
    PartitionLoadRows,
    WindowLoads,
    broker_loads_latest,
    latest_window_start,
    loads_broker_filter,
    loads_partition_filter,
    partition_loads_latest,
)

__all__ = [
    "HEATMAP_LIMIT_MAX",
    "HEATMAP_METRICS",
    "HEATMAP_SORTS",
    "SHARED_SECONDS",
    "TRAFFIC_WINDOWS_MAX",
    "BrokerTraffic",
    "PartitionLoadRows",
    "WindowLoads",
    "Heatmap",
    "aggregation_runs_recent",
    "broker_loads_latest",
    "broker_traffic_series",
    "cluster_snapshot_build",
    "cluster_state_stamp",
    "heatmap_get",
    "latest_window_start",
    "loads_broker_filter",
    "loads_partition_filter",
    "partition_loads_latest",
    "stamp_pushed_note",
    "stamp_token",
    "stamped_answer_get",
]
