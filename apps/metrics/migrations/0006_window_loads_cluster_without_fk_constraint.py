"""A window's partition and topic loads (200k and 8,000 rows at 200k partitions) keep
their cluster without a foreign key constraint: PostgreSQL checked it per row when the
window's transaction committed, 0.8 s of server CPU. Deleting a cluster still deletes
them (Django's cascade). The topic loads also lose their own index on the cluster (the
unique one starts with it). On SQLite this rebuilds the two tables (kept windows only)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("clusters", "0007_topic_placement_counts"),
        ("metrics", "0005_broker_load_measured_flag"),
    ]

    operations = [
        migrations.AlterField(
            model_name="partitionload",
            name="cluster",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="partition_loads",
                to="clusters.cluster",
            ),
        ),
        migrations.AlterField(
            model_name="topicload",
            name="cluster",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="topic_loads",
                to="clusters.cluster",
            ),
        ),
    ]
