"""A collection guard: a test marked `own_stack` must not use the shared services.

`make test` (scripts/test) runs the `own_stack` tests in a pytest process of their own,
at the same time as the other integration tests. That is safe only while each of them
talks to a Kafka cluster (or a whole product) it starts itself: a test on the shared dev
cluster, Redis or SparkSession would stop brokers or read topics under the other pass.
So collection fails instead, naming each offending test and the fixture it uses.
"""

from __future__ import annotations

import pytest

# The session's shared services (tests/conftest.py); `restore_brokers` and the live
# plan fixtures reach them through `kafka_cluster`, which is in their closure.
SHARED_FIXTURES = ("kafka_cluster", "redis_server", "spark")


def shared_fixtures_used(item: pytest.Item) -> list[str]:
    """The shared fixtures in `item`'s fixture closure."""
    names = getattr(item, "fixturenames", ())
    return [name for name in SHARED_FIXTURES if name in names]


def own_stack_tests_guard(items: list[pytest.Item]) -> None:
    """Fail collection, naming every `own_stack` test that uses a shared fixture."""
    offenders = [
        f"{item.nodeid} ({', '.join(used)})"
        for item in items
        if item.get_closest_marker("own_stack") is not None and (used := shared_fixtures_used(item))
    ]
    if offenders:
        raise pytest.UsageError(
            "own_stack test(s) using the shared dev cluster, Redis or SparkSession: "
            + ", ".join(offenders)
        )
