"""A window's partition loads move from one row per partition (PartitionLoad) into one
packed value per topic on its TopicLoad row (apps/metrics/window_packing.py), and the
topic rows' per-broker traffic from two JSON objects into one packed value.

Existing windows are packed as they are: a window with partition rows but no topic row
gets one, summed as services/topic_loads.py does. Broker rows stored before they
carried messages in get them from the partition rows (the traffic chart summed them
there). BrokerLoad.topic_replicas goes: nothing read it (megabytes of JSON a window)."""

from django.db import migrations, models

from apps.metrics.window_packing import brokers_pack, loads_pack

_COLUMNS = (
    "topic",
    "partition",
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


def _sums(rows: list[tuple]) -> tuple[dict[int, float], dict[int, float]]:
    # As services/topic_loads.py: bytes in on every replica; bytes out plus
    # replication on the leader.
    into: dict[int, float] = {}
    out: dict[int, float] = {}
    for _, _, leader, replicas, _, bytes_in, bytes_out, _, _, _ in rows:
        bytes_in = bytes_in or 0.0
        replicas = replicas or ()
        for b in replicas:
            into[b] = into.get(b, 0.0) + bytes_in
        if leader is not None and leader >= 0:
            out[leader] = (
                out.get(leader, 0.0) + (bytes_out or 0.0) + bytes_in * max(len(replicas) - 1, 0)
            )
    return into, out


def _json_brokers(value: dict | None) -> dict[int, float]:
    return {int(b): float(v) for b, v in (value or {}).items()}


def pack_windows(apps, schema_editor) -> None:
    PartitionLoad = apps.get_model("metrics", "PartitionLoad")
    TopicLoad = apps.get_model("metrics", "TopicLoad")
    BrokerLoad = apps.get_model("metrics", "BrokerLoad")
    windows = (
        PartitionLoad.objects.values_list("cluster_id", "window_start")
        .distinct()
        .order_by("cluster_id", "window_start")
    )
    for cluster_id, start in list(windows):
        rows = PartitionLoad.objects.filter(cluster_id=cluster_id, window_start=start)
        end = rows.values_list("window_end", flat=True).first()
        by_topic: dict[str, list[tuple]] = {}
        led: dict[int, float] = {}
        for topic, *row in rows.values_list(*_COLUMNS):
            by_topic.setdefault(topic, []).append(tuple(row))
            if row[2] is not None:
                led[row[2]] = led.get(row[2], 0.0) + (row[4] or 0.0)
        existing = {
            t.topic: t for t in TopicLoad.objects.filter(cluster_id=cluster_id, window_start=start)
        }
        for topic, partition_rows in by_topic.items():
            loads = existing.get(topic)
            if loads is None:
                into, out = _sums(partition_rows)
                loads = TopicLoad(
                    cluster_id=cluster_id,
                    topic=topic,
                    window_start=start,
                    window_end=end,
                    network_in=sum(into.values()),
                    network_out=sum(out.values()),
                    brokers_in={},
                    brokers_out={},
                    brokers=brokers_pack(into=into, out=out),
                )
            loads.partitions = loads_pack(rows=partition_rows)
            loads.partition_count = len(partition_rows)
            loads.save()
        brokers = BrokerLoad.objects.filter(cluster_id=cluster_id, window_start=start)
        if not brokers.exclude(messages_in=None).exists():
            for broker in brokers.filter(broker_id__in=list(led), measured=True):
                broker.messages_in = led[broker.broker_id]
                broker.save(update_fields=["messages_in"])
    for loads in TopicLoad.objects.filter(brokers=b"").iterator():
        loads.brokers = brokers_pack(
            into=_json_brokers(loads.brokers_in), out=_json_brokers(loads.brokers_out)
        )
        loads.save(update_fields=["brokers"])


class Migration(migrations.Migration):
    dependencies = [
        ("metrics", "0006_window_loads_cluster_without_fk_constraint"),
    ]

    operations = [
        # The count before the packed values: SQLite reads a row's columns in order,
        # through the overflow pages of any large value before the one asked for.
        migrations.AddField(
            model_name="topicload",
            name="partition_count",
            field=models.IntegerField(default=0),
        ),
        migrations.AddField(
            model_name="topicload",
            name="brokers",
            field=models.BinaryField(default=b""),
        ),
        migrations.AddField(
            model_name="topicload",
            name="partitions",
            field=models.BinaryField(default=b""),
        ),
        migrations.RunPython(pack_windows, migrations.RunPython.noop),
        migrations.RemoveField(model_name="topicload", name="brokers_in"),
        migrations.RemoveField(model_name="topicload", name="brokers_out"),
        migrations.RemoveField(model_name="brokerload", name="topic_replicas"),
        migrations.DeleteModel(name="PartitionLoad"),
    ]
