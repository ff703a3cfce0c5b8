"""Storing one run's results in one transaction: its windows (rewritten), the cursor
that says where the next run reads, and the figures recorded on the run.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections, transaction

from apps.clusters.models import Cluster

from ..models import AggregationRun, BrokerLoad, MetricsCursor, PartitionLoad
from ..signals import loads_stored
from .retention import metrics_windows_prune
from .topic_loads import topic_loads_store


def _ms_to_dt(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def _one_per_window(loads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One load per partition and window, the one with most samples.

    Two only appear when the metrics topic gained partitions mid-window, which
    splits one partition's samples over two Kafka partitions.
    """
    best: dict[tuple[str, int, int], dict[str, Any]] = {}
    for r in loads:
        key = (r["topic"], r["partition"], r["window_start"])
        if key not in best or r["samples"] > best[key]["samples"]:
            best[key] = r
    return list(best.values())


def _leader_messages_in(loads: list[dict[str, Any]]) -> dict[tuple[int, int], float]:
    """(window start ms, broker) -> messages in of the partitions it led; a broker that
    led only unmeasured partitions reads 0, one that led none is absent."""
    out: dict[tuple[int, int], float] = {}
    for r in loads:
        leader = r["leader"]
        if leader is None:
            continue
        key = (r["window_start"], leader)
        out[key] = out.get(key, 0.0) + (r["messages_in"] or 0.0)
    return out


# Partition-load columns, in the order _partition_params gives them.
_PARTITION_COLUMNS = (
    "cluster",
    "topic",
    "partition",
    "window_start",
    "window_end",
    "samples",
    "leader",
    "replicas",
    "messages_in",
    "bytes_in",
    "bytes_out",
    "size",
    "avg_record_size",
    "consumer_groups",
)


def _partition_loads_write(*, cluster: Cluster, loads: list[dict[str, Any]]) -> None:
    """A new window (the usual case) is inserted by one prepared INSERT executed for
    every row (PostgreSQL: one COPY): building a model instance per row and upserting
    took most of the time at 200k partitions. A window already stored (a re-run after
    a crash) is upserted, so none of its rows is lost."""
    starts = {ms: _ms_to_dt(ms) for ms in {r["window_start"] for r in loads}}
    written = set(
        PartitionLoad.objects.filter(cluster=cluster, window_start__in=list(starts.values()))
        .values_list("window_start", flat=True)
        .distinct()
    )
    again_ms = {ms for ms, dt in starts.items() if dt in written}
    if again_ms:
        _partition_loads_upsert(
            cluster=cluster, loads=[r for r in loads if r["window_start"] in again_ms]
        )
        loads = [r for r in loads if r["window_start"] not in again_ms]
    if not loads:
        return
    # Per row only what differs: datetimes are adapted once per window, and the
    # replica list goes through the backend's JSON adapter directly (the field's
    # get_db_prep_save looks the connection up again for every row: ~40 % of the time).
    db = connections[DEFAULT_DB_ALIAS]
    start_field = PartitionLoad._meta.get_field("window_start")
    stamp = {
        ms: start_field.get_db_prep_save(_ms_to_dt(ms), db)
        for ms in {r["window_start"] for r in loads} | {r["window_end"] for r in loads}
    }

    copy = db.vendor == "postgresql"
    # PostgreSQL: COPY, with the JSON as text (psycopg's executemany and a Jsonb
    # adapter per row took 7 s of CPU at 200k rows).
    as_json = (lambda value, _: json.dumps(value)) if copy else db.ops.adapt_json_value
    cluster_id = cluster.pk
    params = [
        (
            cluster_id,
            r["topic"],
            r["partition"],
            stamp[r["window_start"]],
            stamp[r["window_end"]],
            r["samples"],
            r["leader"],
            as_json(r["replicas"] or [], None),
            r["messages_in"],
            r["bytes_in"],
            r["bytes_out"],
            r["size"],
            r["avg_record_size"],
            r["consumer_groups"],
        )
        for r in loads
    ]
    qn = db.ops.quote_name
    table = qn(PartitionLoad._meta.db_table)
    columns = ", ".join(qn(PartitionLoad._meta.get_field(f).column) for f in _PARTITION_COLUMNS)
    if copy:
        with (
            db.cursor() as cursor,
            cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as pipe,
        ):
            for row in params:
                pipe.write_row(row)
        return
    sql = "INSERT INTO {} ({}) VALUES ({})".format(
        table, columns, ", ".join(["%s"] * len(_PARTITION_COLUMNS))
    )
    with db.cursor() as cursor:
        cursor.executemany(sql, params)


def _partition_loads_upsert(*, cluster: Cluster, loads: list[dict[str, Any]]) -> None:
    rows = [
        PartitionLoad(
            cluster=cluster,
            topic=r["topic"],
            partition=r["partition"],
            window_start=_ms_to_dt(r["window_start"]),
            window_end=_ms_to_dt(r["window_end"]),
            samples=r["samples"],
            leader=r["leader"],
            replicas=r["replicas"] or [],
            messages_in=r["messages_in"],
            bytes_in=r["bytes_in"],
            bytes_out=r["bytes_out"],
            size=r["size"],
            avg_record_size=r["avg_record_size"],
            consumer_groups=r["consumer_groups"],
        )
        for r in loads
    ]
    PartitionLoad.objects.bulk_create(
        rows,
        batch_size=2000,
        update_conflicts=True,
        unique_fields=["cluster", "window_start", "topic", "partition"],
        update_fields=list(_PARTITION_COLUMNS[4:]),
    )


def aggregation_results_store(
    *, cluster: Cluster, run: AggregationRun, topic: str, result: Any
) -> None:
    """Write windows, advance the cursor and prune, all in one transaction; then
    `loads_stored` (from inside it, so receivers defer to its commit)."""
    partition_loads = _one_per_window(result.partition_loads)
    led = _leader_messages_in(partition_loads)
    broker_rows = [
        BrokerLoad(
            cluster=cluster,
            broker_id=r["broker"],
            window_start=_ms_to_dt(r["window_start"]),
            window_end=_ms_to_dt(r["window_end"]),
            network_in=r["network_in"],
            network_out=r["network_out"],
            disk=r["disk"],
            replicas=r["replicas"],
            leaders=r["leaders"],
            messages_in=led.get((r["window_start"], r["broker"])),
            topic_replicas=r["topic_replicas"] or {},
        )
        for r in result.broker_loads
    ]
    with transaction.atomic():
        _partition_loads_write(cluster=cluster, loads=partition_loads)
        topic_loads_store(cluster=cluster, loads=partition_loads)
        BrokerLoad.objects.bulk_create(
            broker_rows,
            batch_size=2000,
            update_conflicts=True,
            unique_fields=["cluster", "window_start", "broker_id"],
            update_fields=[
                "window_end",
                "network_in",
                "network_out",
                "disk",
                "replicas",
                "leaders",
                "messages_in",
                "topic_replicas",
            ],
        )
        cursor, _ = MetricsCursor.objects.select_for_update().get_or_create(
            cluster=cluster, defaults={"topic": topic}
        )
        if cursor.topic != topic:
            cursor.topic, cursor.offsets = topic, {}
        cursor.offsets = {**cursor.offsets, **{str(p): o for p, o in result.next_offsets.items()}}
        if result.finalized_until_ms is not None:
            cursor.finalized_until = _ms_to_dt(result.finalized_until_ms)
        cursor.save()
        metrics_windows_prune(cluster=cluster)
        starts = {_ms_to_dt(ms) for ms in {r["window_start"] for r in partition_loads}}
        starts |= {r.window_start for r in broker_rows}
        if starts:
            loads_stored.send_robust(sender=Cluster, cluster=cluster, window_start=max(starts))
    run.input_rows = result.input_rows
    run.output_rows = len(partition_loads)
    run.broker_rows = len(broker_rows)
    run.malformed_rows = result.malformed_rows
    run.late_rows = result.late_rows
    run.windows = sorted(s.isoformat() for s in starts)
