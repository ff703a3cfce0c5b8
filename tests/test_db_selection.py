"""`--database-only` (tests/support/db_selection.py), run on a small test file."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

_CONFTEST = """
import pytest
from tests.support.db_selection import database_tests_select

def pytest_collection_modifyitems(config, items):
    database_tests_select(config, items)

# A stand-in for pytest-django's fixture (the selection reads fixture names only).
@pytest.fixture
def db():
    pass

@pytest.fixture
def client(db):
    pass
"""

_TESTS = """
import pytest

@pytest.mark.django_db
def test_marked():
    pass

def test_through_a_fixture(client):
    pass

def test_pure():
    pass
"""


def test_it_deselects_only_the_tests_that_cannot_reach_the_database(pytester):
    pytester.makeconftest(_CONFTEST)
    pytester.makepyfile(test_selected=_TESTS)

    result = pytester.runpytest("--collect-only", "-q", "-p", "no:django", "-p", "no:cacheprovider")

    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "test_selected.py::test_marked",
            "test_selected.py::test_through_a_fixture",
            "*2/3 tests collected (1 deselected)*",
        ]
    )
    result.stdout.no_fnmatch_line("*test_pure*")
