"""A collection guard: every transactional database test must use serialized rollback.

A transactional test (``django_db(transaction=True)``, ``reset_sequences=True``, or the
``transactional_db`` / ``live_server`` fixtures) ends with a flush. In this project a
plain flush makes the next test re-create the content types with new ids, which breaks
every later serialized-rollback test that reloads rows pointing at the old ids: the
failures then appear in some other test, and only in some orders. So collection fails
instead, naming each offending test.
"""

from __future__ import annotations

import pytest

# pytest-django's own test: which fixtures make a test transactional / serialized.
_TRANSACTIONAL_FIXTURES = ("transactional_db", "live_server")
_SERIALIZED_FIXTURE = "django_db_serialized_rollback"


def _django_db_args(
    transaction: bool = False,
    reset_sequences: bool = False,
    databases: object = None,
    serialized_rollback: bool = False,
    available_apps: object = None,
) -> tuple[bool, bool]:
    """The marker's signature (pytest-django's), reduced to (transactional, serialized)."""
    return bool(transaction or reset_sequences), bool(serialized_rollback)


def flush_without_serialized_rollback(item: pytest.Item) -> bool:
    """True when `item` runs as a transactional test that ends in a plain flush."""
    fixturenames = getattr(item, "fixturenames", ())
    transactional = any(name in fixturenames for name in _TRANSACTIONAL_FIXTURES)
    serialized = _SERIALIZED_FIXTURE in fixturenames
    marker = item.get_closest_marker("django_db")
    if marker is not None:
        marked_transactional, marked_serialized = _django_db_args(*marker.args, **marker.kwargs)
        transactional = transactional or marked_transactional
        serialized = serialized or marked_serialized
    return transactional and not serialized


def transactional_tests_guard(items: list[pytest.Item]) -> None:
    """Fail collection, naming every transactional test that would end in a plain flush."""
    offenders = [item.nodeid for item in items if flush_without_serialized_rollback(item)]
    if offenders:
        raise pytest.UsageError(
            "transactional database test(s) without serialized rollback: "
            + ", ".join(offenders)
            + ". Mark them django_db(transaction=True, serialized_rollback=True) (or request"
            " django_db_serialized_rollback): a plain flush re-creates the content types"
            " with new ids and breaks the serialized tests that run after it."
        )
