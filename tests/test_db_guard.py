"""The collection guard in tests/support/db_guard.py, run on small test files."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

_CONFTEST = """
from support.db_guard import transactional_tests_guard

def pytest_collection_modifyitems(items):
    transactional_tests_guard(items)
"""

_TESTS = """
import pytest

@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_serialized():
    pass

@pytest.mark.django_db
def test_plain():
    pass

def test_no_db():
    pass
"""


def _collect(pytester: pytest.Pytester, extra: str) -> pytest.RunResult:
    pytester.makeconftest(_CONFTEST)
    pytester.makepyfile(test_guarded=_TESTS + extra)
    # pytest-django stays out: the guard reads markers and fixture names only.
    return pytester.runpytest("--collect-only", "-q", "-p", "no:django", "-p", "no:cacheprovider")


def test_it_collects_tests_that_roll_back_by_serialization_or_not_at_all(pytester):
    result = _collect(pytester, "")

    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*3 tests collected*"])


@pytest.mark.parametrize(
    "offender",
    [
        "@pytest.mark.django_db(transaction=True)\ndef test_flushes():\n    pass\n",
        "@pytest.mark.django_db(True)\ndef test_flushes():\n    pass\n",
        "@pytest.mark.django_db(transaction=True, reset_sequences=True)\n"
        "def test_flushes():\n    pass\n",
        "@pytest.fixture\ndef transactional_db():\n    pass\n\n"
        "def test_flushes(transactional_db):\n    pass\n",
    ],
    ids=["keyword", "positional", "reset-sequences", "fixture"],
)
def test_it_fails_collection_naming_a_transactional_test_without_serialized_rollback(
    pytester, offender
):
    result = _collect(pytester, "\n" + offender)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*without serialized rollback: test_guarded.py::test_flushes. Mark them*"]
    )
    assert "test_serialized" not in result.stderr.str()


def test_it_accepts_the_serialized_rollback_fixture(pytester):
    fixture_user = (
        "\n@pytest.fixture\ndef transactional_db():\n    pass\n\n"
        "@pytest.fixture\ndef django_db_serialized_rollback():\n    pass\n\n"
        "def test_migrates(transactional_db, django_db_serialized_rollback):\n    pass\n"
    )
    result = _collect(pytester, fixture_user)

    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*4 tests collected*"])
