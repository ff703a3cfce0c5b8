"""A what-if is bounded: at most WHATIF_BROKERS_MAX brokers added or removed, so any
viewer's question is answered quickly (unbounded, 3,000 added brokers cost 30 s of CPU).
The time at the limit is printed, not asserted (`pytest -s` shows it)."""

import time

import pytest

from apps.plans.whatif import WHATIF_BROKERS_MAX
from tests.security.input_clients import api_as
from tests.support.factories import cluster_make

pytestmark = pytest.mark.django_db

WHAT_IF = "/api/clusters/prod/what-if/"


def added(count: int) -> dict:
    return {"add_brokers": [{"id": 100 + i, "rack": "abcdef"[i % 6]} for i in range(count)]}


def test_it_refuses_more_brokers_than_the_limit(cluster):
    started = time.perf_counter()
    response = api_as("viewer").post(WHAT_IF, added(3000), format="json")

    assert response.status_code == 400 and "add_brokers" in response.json()
    print(f"\nwhat-if of 3000 added brokers refused in {time.perf_counter() - started:.3f} s")


def test_it_refuses_removing_more_brokers_than_the_limit(cluster):
    body = {"remove_brokers": list(range(WHATIF_BROKERS_MAX + 1))}
    response = api_as("viewer").post(WHAT_IF, body, format="json")

    assert response.status_code == 400 and "remove_brokers" in response.json()


@pytest.mark.parametrize("partitions", [8, 1200])
def test_it_answers_at_the_limit(partitions):
    # 6 brokers; `partitions` partitions at replication factor 3.
    cluster_make(
        assignment={("t", i): [1 + (i + k) % 6 for k in range(3)] for i in range(partitions)},
        alive=(1, 2, 3, 4, 5, 6),
    )
    started = time.perf_counter()
    response = api_as("viewer").post(WHAT_IF, added(WHATIF_BROKERS_MAX), format="json")
    seconds = time.perf_counter() - started

    assert response.status_code == 200, response.json()
    assert len(response.json()["brokers"]) == WHATIF_BROKERS_MAX
    print(
        f"\nwhat-if of {WHATIF_BROKERS_MAX} added brokers on {partitions} partitions "
        f"x RF 3: {seconds:.2f} s"
    )
