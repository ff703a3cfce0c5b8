"""The policy page refuses numbers past their range with a message and changes
nothing: a throttle over 1 TB/s, a move cap over MAX_MOVES_MAX, a broker id past
Kafka's int32 (unbounded, a 10³⁰ excluded broker would be stored)."""

import pytest
from devkit.users import user_make

from apps.audit.models import AuditEvent
from apps.core.bounds import BROKER_ID_MAX, MAX_MOVES_MAX, THROTTLE_BYTES_PER_SEC_MAX
from tests.support.factories import cluster_make

pytestmark = pytest.mark.django_db

HUGE = str(10**30)
VALID = {
    "detection_interval": "120",
    "dead_broker_grace": "60",
    "balance_threshold": "1.1",
    "balance_target": "1.05",
    "excluded_brokers": "",
    "throttle_bytes_per_sec": "0",
    "max_moves_per_broker": "5",
    "max_moves_cluster": "20",
}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("throttle_bytes_per_sec", str(THROTTLE_BYTES_PER_SEC_MAX + 1)),
        ("max_moves_per_broker", str(MAX_MOVES_MAX + 1)),
        ("max_moves_cluster", str(MAX_MOVES_MAX + 1)),
        ("excluded_brokers", str(BROKER_ID_MAX + 1)),
        ("excluded_brokers", HUGE),
    ],
)
def test_it_refuses_a_policy_number_past_its_range(client, field, value):
    cluster_make()
    client.force_login(user_make("ada", "admin"))
    client.get("/clusters/prod/policy/")

    response = client.post("/clusters/prod/policy/", {**VALID, field: value})

    assert response.status_code == 200
    assert 'class="error' in response.content.decode() or "errorlist" in response.content.decode()
    assert not AuditEvent.objects.filter(action="policy.changed").exists()
