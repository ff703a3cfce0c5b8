"""A plan's large parts (reassignment, rollback, report) move to plans.PlanContent,
and the plan keeps the count of partitions it changes: lists and state changes then
read and write the short row only. Existing plans are copied over."""

import django.db.models.deletion
from django.db import migrations, models


def content_copy(apps, schema_editor):
    Plan = apps.get_model("plans", "Plan")
    PlanContent = apps.get_model("plans", "PlanContent")
    rows = Plan.objects.order_by("pk").values_list(
        "pk", "reassignment", "rollback_reassignment", "report"
    )
    for pk, reassignment, rollback, report in rows.iterator(chunk_size=20):
        PlanContent.objects.create(
            plan_id=pk,
            reassignment=reassignment,
            rollback_reassignment=rollback,
            report=report or {},
        )
        Plan.objects.filter(pk=pk).update(
            partition_count=len((reassignment or {}).get("partitions", []))
        )


def content_restore(apps, schema_editor):
    Plan = apps.get_model("plans", "Plan")
    PlanContent = apps.get_model("plans", "PlanContent")
    for content in PlanContent.objects.iterator(chunk_size=20):
        Plan.objects.filter(pk=content.plan_id).update(
            reassignment=content.reassignment,
            rollback_reassignment=content.rollback_reassignment,
            report=content.report,
        )


class Migration(migrations.Migration):
    dependencies = [
        ("plans", "0007_plan_estimate_and_bytes_copied"),
    ]

    operations = [
        migrations.CreateModel(
            name="PlanContent",
            fields=[
                (
                    "plan",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="content",
                        serialize=False,
                        to="plans.plan",
                    ),
                ),
                ("reassignment", models.JSONField()),
                ("rollback_reassignment", models.JSONField()),
                ("report", models.JSONField(blank=True, default=dict)),
            ],
        ),
        migrations.AddField(
            model_name="plan",
            name="partition_count",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(content_copy, content_restore, elidable=False),
        migrations.RemoveField(model_name="plan", name="reassignment"),
        migrations.RemoveField(model_name="plan", name="report"),
        migrations.RemoveField(model_name="plan", name="rollback_reassignment"),
    ]
