"""`--database-only`: run only the tests that touch the database.

scripts/test-postgres re-runs the unit tests on PostgreSQL for the queries that differ by
backend. A test without database access (pytest-django blocks it unless the test is
marked `django_db` or requests a database fixture) runs the same code on either backend,
so the second pass skips it: it already ran in the SQLite pass.
"""

from __future__ import annotations

import pytest

# pytest-django's fixtures that give a test the database (client, admin_user and the
# like request `db`, so they are in the closure too).
_DATABASE_FIXTURES = frozenset(
    {
        "db",
        "transactional_db",
        "django_db_reset_sequences",
        "django_db_serialized_rollback",
        "live_server",
    }
)


def uses_database(item: pytest.Item) -> bool:
    if item.get_closest_marker("django_db") is not None:
        return True
    return not _DATABASE_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))


def database_tests_select(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect (reported as such) every test that cannot reach the database."""
    without = [item for item in items if not uses_database(item)]
    if without:
        config.hook.pytest_deselected(items=without)
        items[:] = [item for item in items if uses_database(item)]
