"""Migration tests: the schema taken back to a migration, forward again afterwards.

Their fixtures ask for transactional_db and django_db_serialized_rollback: the flush
after such a test would otherwise re-create the content types with new ids, which
would clash with a later serialized-rollback test's reload."""

from __future__ import annotations

from collections.abc import Iterator

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrated_back_to(targets: list[tuple[str, str]]) -> Iterator[MigrationExecutor]:
    """For a fixture to `yield from`: the schema at `targets` (an executor on it), and the
    newest migrations again once the test is done."""
    MigrationExecutor(connection).migrate(targets)
    yield MigrationExecutor(connection)
    latest_migrate()


def latest_migrate() -> None:
    """On to the newest migrations, so the current models match the tables."""
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def migrated_apps(targets: list[tuple[str, str]]):
    """Migrate to `targets`; the historical models there."""
    MigrationExecutor(connection).migrate(targets)
    return MigrationExecutor(connection).loader.project_state(targets).apps
