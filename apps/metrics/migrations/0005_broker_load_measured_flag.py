"""Broker loads say whether anything was measured in their window, so the traffic
chart no longer asks the partition rows of every shown window (two queries each); the
rows already stored get it from their partition rows, as the chart judged it."""

from django.db import migrations, models
from django.db.models import Count


def measured_fill(apps, schema_editor):
    BrokerLoad = apps.get_model("metrics", "BrokerLoad")
    PartitionLoad = apps.get_model("metrics", "PartitionLoad")
    # A window with partition rows none of which has a rate. Windows whose partition
    # rows are pruned were measured, or they would not have lasted (as the chart read it).
    unmeasured = (
        PartitionLoad.objects.values("cluster_id", "window_start")
        .annotate(rates=Count("bytes_in"))
        .filter(rates=0)
    )
    for row in unmeasured.iterator():
        BrokerLoad.objects.filter(
            cluster_id=row["cluster_id"], window_start=row["window_start"]
        ).update(measured=False)


class Migration(migrations.Migration):
    dependencies = [
        ("metrics", "0004_topic_loads_per_window"),
    ]

    operations = [
        migrations.AddField(
            model_name="brokerload",
            name="measured",
            field=models.BooleanField(default=True),
        ),
        migrations.RunPython(measured_fill, migrations.RunPython.noop),
    ]
