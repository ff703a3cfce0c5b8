"""One leader among processes through a Redis key: a second process follows while the
leader renews, takes over once the leader stops renewing (it died), and at once when
the leader lets go."""

import pytest
from devkit.polling import wait_until

from apps.core.leadership import Leadership

pytestmark = pytest.mark.integration


@pytest.fixture
def pair(redis_server):
    made = [Leadership(redis_url=redis_server, name="test:leadership", ttl=2.0) for _ in range(2)]
    made[0]._client.delete("test:leadership")
    yield made
    made[0]._client.delete("test:leadership")


def test_one_leads_and_the_other_takes_over_when_it_stops_renewing(pair) -> None:
    first, second = pair
    assert first.held()
    assert not second.held()

    # The first stops asking, as a killed process would: its key expires.
    wait_until(second.held, timeout=10, interval=0.2, what="the second to take over")
    first._checked = float("-inf")  # due to renew now
    assert not first.held()


def test_the_next_leads_at_once_when_the_leader_lets_go(pair) -> None:
    first, second = pair
    assert first.held()

    first.release()
    second._checked = float("-inf")

    assert second.held()
