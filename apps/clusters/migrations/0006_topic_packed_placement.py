"""Each topic keeps its partitions packed (apps.clusters.placement) beside its
placement digest, so the snapshot and the sync read no partition row; the topics
already synced get it from their partition rows (the digest is recomputed from it)."""

from itertools import groupby

from django.db import migrations, models

from apps.clusters.placement import PackedPartition, placement_hash, placement_pack


def placement_fill(apps, schema_editor):
    Topic = apps.get_model("clusters", "Topic")
    Partition = apps.get_model("clusters", "Partition")
    rows = (
        Partition.objects.order_by("topic_id", "index")
        .values_list("topic_id", "index", "leader", "replicas", "isr")
        .iterator(chunk_size=5000)
    )
    # A topic without partitions: an empty placement, which its digest vouches for.
    Topic.objects.update(placement=b"", placement_digest=placement_hash(packed=b""))
    for topic_id, partitions in groupby(rows, key=lambda r: r[0]):
        packed = placement_pack(
            partitions=[
                PackedPartition(index, leader, list(replicas or []), list(isr or []))
                for _, index, leader, replicas, isr in partitions
            ]
        )
        Topic.objects.filter(pk=topic_id).update(
            placement=packed, placement_digest=placement_hash(packed=packed)
        )


class Migration(migrations.Migration):
    dependencies = [
        ("clusters", "0005_sync_placement_digest_and_counts"),
    ]

    operations = [
        migrations.AddField(
            model_name="topic",
            name="placement",
            field=models.BinaryField(default=b"", editable=False),
        ),
        migrations.RunPython(placement_fill, migrations.RunPython.noop),
    ]
