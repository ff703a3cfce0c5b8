"""A next release's migration, applied to a database by `python -m tests.upgrade.next_release
KIND` while this release's processes run on it (tests/upgrade/test_migrate_under_worker_live.py).

KIND `additive` adds what docs/deployment.md allows: a required column with a database
default, a nullable column and an index, on the tables a sync writes. KIND `required`
adds a required column with a Python-side default only, which the rule forbids; applied
after `additive`, whose operations it builds on."""

from __future__ import annotations

import os
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "balancer_site.settings")
django.setup()

from django.db import connection, migrations, models  # noqa: E402
from django.db.migrations.executor import MigrationExecutor  # noqa: E402


def _migration(name: str, dependency: tuple[str, str], operations: list) -> migrations.Migration:
    migration = migrations.Migration(name, "clusters")
    migration.dependencies = [dependency]
    migration.operations = operations
    return migration


def main(kind: str) -> None:
    executor = MigrationExecutor(connection)
    (leaf,) = executor.loader.graph.leaf_nodes("clusters")
    additive = _migration(
        "9998_next_release_additive",
        leaf,
        [
            migrations.AddField("topic", "next_count", models.IntegerField(db_default=0)),
            migrations.AddField("broker", "next_note", models.CharField(max_length=40, null=True)),
            migrations.AddIndex(
                "topic", models.Index(fields=["cluster", "internal"], name="next_topic_internal")
            ),
        ],
    )
    state = executor.loader.project_state()
    if kind == "additive":
        executor.apply_migration(state, additive)
        return
    required = _migration(
        "9999_next_release_required",
        ("clusters", additive.name),
        [migrations.AddField("topic", "next_required", models.IntegerField(default=0))],
    )
    # The additive columns are in the table already: the state must know them, or a
    # table rebuild (SQLite) would leave them out.
    executor.apply_migration(additive.mutate_state(state, preserve=False), required)


if __name__ == "__main__":
    main(sys.argv[1])
