"""The collection guard in tests/support/own_stack_guard.py, run on small test files."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

_CONFTEST = """
import pytest
from tests.support.own_stack_guard import own_stack_tests_guard

def pytest_configure(config):
    config.addinivalue_line("markers", "own_stack: on a stack of its own")

def pytest_collection_modifyitems(items):
    own_stack_tests_guard(items)

# Stand-ins for the shared services (the guard reads fixture names only).
@pytest.fixture
def kafka_cluster():
    pass

@pytest.fixture
def restore_brokers(kafka_cluster):
    pass

@pytest.fixture
def redis_server():
    pass

@pytest.fixture
def spark():
    pass

@pytest.fixture
def kafka_jbod_cluster():
    pass
"""

_ACCEPTED = """
import pytest

@pytest.mark.own_stack
def test_own(kafka_jbod_cluster):
    pass

def test_shared(kafka_cluster, redis_server, spark):
    pass
"""

_OFFENDERS = """
@pytest.mark.own_stack
def test_direct(kafka_cluster):
    pass

@pytest.mark.own_stack
def test_through_another_fixture(restore_brokers):
    pass

@pytest.mark.own_stack
def test_redis_and_spark(redis_server, spark):
    pass
"""


def _collect(pytester: pytest.Pytester, source: str) -> pytest.RunResult:
    pytester.makeconftest(_CONFTEST)
    pytester.makepyfile(test_guarded=source)
    return pytester.runpytest("--collect-only", "-q", "-p", "no:django", "-p", "no:cacheprovider")


def test_it_collects_own_stack_tests_on_their_own_clusters_and_others_on_the_shared_ones(
    pytester,
):
    result = _collect(pytester, _ACCEPTED)

    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*2 tests collected*"])


def test_it_fails_collection_naming_each_own_stack_test_on_a_shared_service(pytester):
    result = _collect(pytester, _ACCEPTED + _OFFENDERS)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    error = result.stderr.str()
    assert "test_guarded.py::test_direct (kafka_cluster)" in error
    assert "test_guarded.py::test_through_another_fixture (kafka_cluster)" in error
    assert "test_guarded.py::test_redis_and_spark (redis_server, spark)" in error
    for accepted in ("test_own", "test_shared"):
        assert f"::{accepted} " not in error
