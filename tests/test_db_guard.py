"""The collection guard in tests/support/db_guard.py, run on small test files."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

_CONFTEST = """
import pytest
from tests.support.db_guard import transactional_tests_guard

def pytest_collection_modifyitems(items):
    transactional_tests_guard(items)

# Stand-ins for pytest-django's fixtures (the guard reads fixture names only).
@pytest.fixture
def transactional_db():
    pass

@pytest.fixture
def django_db_serialized_rollback():
    pass
"""

_ACCEPTED = """
import pytest

@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_serialized():
    pass

@pytest.mark.django_db
def test_plain():
    pass

def test_no_db():
    pass

def test_migrates(transactional_db, django_db_serialized_rollback):
    pass
"""

_OFFENDERS = """
@pytest.mark.django_db(transaction=True)
def test_keyword():
    pass

@pytest.mark.django_db(True)
def test_positional():
    pass

@pytest.mark.django_db(reset_sequences=True)
def test_reset_sequences():
    pass

def test_fixture(transactional_db):
    pass
"""


def _collect(pytester: pytest.Pytester, source: str) -> pytest.RunResult:
    pytester.makeconftest(_CONFTEST)
    pytester.makepyfile(test_guarded=source)
    # pytest-django stays out: the guard reads markers and fixture names only.
    return pytester.runpytest("--collect-only", "-q", "-p", "no:django", "-p", "no:cacheprovider")


def test_it_collects_tests_that_roll_back_by_serialization_or_not_at_all(pytester):
    result = _collect(pytester, _ACCEPTED)

    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*4 tests collected*"])


def test_it_fails_collection_naming_each_transactional_test_without_serialized_rollback(
    pytester,
):
    result = _collect(pytester, _ACCEPTED + _OFFENDERS)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    error = result.stderr.str()
    assert "without serialized rollback: test_guarded.py::test_keyword, " in error
    named = {
        name
        for name in ("keyword", "positional", "reset_sequences", "fixture")
        if f"test_guarded.py::test_{name}" in error
    }
    assert named == {"keyword", "positional", "reset_sequences", "fixture"}
    for accepted in ("test_serialized", "test_plain", "test_no_db", "test_migrates"):
        assert accepted not in error
    assert "django_db(transaction=True, serialized_rollback=True)" in error
