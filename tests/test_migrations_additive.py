"""Upgrades without a stop (docs/deployment.md): a migration runs while the previous
release's processes keep serving, so it only adds: tables, nullable columns or columns
with a database default (`db_default`), indexes. Dropping, renaming, or making a column
required goes in a later release, once no running code reads it; the ones made before
that rule are listed.

A required column needs `db_default`, not only `default`: Django drops a `default` from
the table once the column is filled, and the previous release, which does not know the
column, would then insert rows the database refuses."""

from __future__ import annotations

from django.db import models
from django.db.migrations import operations as ops
from django.db.migrations.loader import MigrationLoader

# (app, migration): why it takes something away.
RELEASED_BEFORE_THE_RULE = {
    ("clusters", "0002_connection_settings"): "settings moved into encrypted fields",
    ("metrics", "0007_partition_loads_packed_on_topic_loads"): "per-partition rows packed",
    ("plans", "0008_plan_content_table_and_partition_count"): "large parts moved out of the row",
}
# (app, migration): added required columns with a Python-side default only.
REQUIRED_WITHOUT_DB_DEFAULT_BEFORE_THE_RULE = {
    ("clusters", "0002_connection_settings"),
    ("clusters", "0003_round_leases_and_backoff"),
    ("clusters", "0004_cluster_access_warning"),
    ("clusters", "0005_sync_placement_digest_and_counts"),
    ("clusters", "0006_topic_packed_placement"),
    ("metrics", "0005_broker_load_measured_flag"),
    ("metrics", "0007_partition_loads_packed_on_topic_loads"),
    ("plans", "0003_move_progress_and_dead_targets"),
    ("plans", "0005_execution_controls"),
    ("plans", "0006_policy_balance_target_and_violation_window"),
    ("plans", "0008_plan_content_table_and_partition_count"),
    ("plans", "0009_policy_detection_outcome_and_loads_wait"),
    ("plans", "0011_plan_estimate_note"),
}
TAKES_AWAY = (
    ops.RemoveField,
    ops.DeleteModel,
    ops.RenameField,
    ops.RenameModel,
    ops.RemoveConstraint,
    ops.RemoveIndex,
)


def _required_without_db_default(field) -> bool:
    return not (field.null or field.many_to_many or field.has_db_default())


def _problems(loader: MigrationLoader) -> list[str]:
    found = []
    for (app, name), migration in sorted(loader.disk_migrations.items()):
        if not migration.__module__.startswith("apps."):
            continue
        if (app, name) in RELEASED_BEFORE_THE_RULE:
            continue
        before = loader.project_state((app, name), at_end=False)
        for op in migration.operations:
            if isinstance(op, TAKES_AWAY):
                found.append(f"{app}.{name}: {op.describe()}")
            elif isinstance(op, ops.AddField) and _required_without_db_default(op.field):
                if (app, name) not in REQUIRED_WITHOUT_DB_DEFAULT_BEFORE_THE_RULE:
                    found.append(f"{app}.{name}: {op.describe()} is required, no db_default")
            elif isinstance(op, ops.AlterField):
                old = before.models[app, op.model_name_lower].fields[op.name]
                if old.null and not op.field.null and not op.field.has_db_default():
                    found.append(f"{app}.{name}: {op.describe()} makes a column required")
    return found


def test_every_migration_since_the_rule_only_adds() -> None:
    loader = MigrationLoader(None, ignore_no_migrations=True)

    assert len(loader.disk_migrations) > 20
    assert _problems(loader) == []


def test_it_catches_a_dropped_column_and_a_column_made_required() -> None:
    from apps.clusters.models import ClusterRound

    loader = MigrationLoader(None, ignore_no_migrations=True)
    migration = loader.disk_migrations["clusters", "0009_round_duration"]
    required = ClusterRound._meta.get_field("lease_until").clone()
    required.null = False
    migration.operations = [
        *migration.operations,
        ops.AlterField(model_name="clusterround", name="lease_until", field=required),
        ops.RemoveField(model_name="clusterround", name="skipped"),
        ops.AddField(
            model_name="clusterround", name="retries", field=models.IntegerField(default=0)
        ),
    ]

    found = _problems(loader)

    assert any("makes a column required" in p for p in found)
    assert any("Remove field skipped" in p for p in found)
    assert any("retries" in p and "no db_default" in p for p in found)
