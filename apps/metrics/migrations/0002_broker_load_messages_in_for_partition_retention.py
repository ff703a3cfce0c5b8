"""Broker loads carry the messages in of the partitions each broker leads, so the
traffic chart no longer needs a window's partition rows (retention keeps fewer of
them); the rows already stored get it from their partition rows."""

from django.db import migrations, models
from django.db.models import Sum


def messages_in_fill(apps, schema_editor):
    BrokerLoad = apps.get_model("metrics", "BrokerLoad")
    PartitionLoad = apps.get_model("metrics", "PartitionLoad")
    totals = (
        PartitionLoad.objects.filter(leader__isnull=False)
        .values("cluster_id", "window_start", "leader")
        .annotate(total=Sum("messages_in"))
    )
    for row in totals.iterator():
        BrokerLoad.objects.filter(
            cluster_id=row["cluster_id"],
            window_start=row["window_start"],
            broker_id=row["leader"],
        ).update(messages_in=row["total"] or 0.0)


class Migration(migrations.Migration):
    dependencies = [
        ("metrics", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="brokerload",
            name="messages_in",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.RunPython(messages_in_fill, migrations.RunPython.noop),
    ]
