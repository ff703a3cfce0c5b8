"""The canary on the secured dev cluster, as the balancer's principal: with only the
ACLs docs/security.md lists, it creates its topic and measures every broker."""

import pytest
from devkit.polling import wait_until

from apps.canary.probes import canary_probe_drop
from apps.clusters.services import cluster_sync
from tests.support.canary import canary_all_measured

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


@pytest.fixture
def canary_cleanup(settings, super_admin):
    yield
    topic = settings.CANARY_TOPIC
    if topic in super_admin.list_topics(timeout=10).topics:
        super_admin.delete_topics([topic])[topic].result(30)


def test_it_measures_every_broker_with_the_listed_acls(secured, canary_cleanup) -> None:
    assert cluster_sync(cluster=secured), secured.last_sync_error
    try:
        windows = wait_until(
            lambda: canary_all_measured(secured),
            timeout=60,
            what="a canary round measuring every broker",
        )
    finally:
        canary_probe_drop(cluster=secured)

    assert sorted(w.broker_id for w in windows) == [1, 2, 3]
    assert all(w.produce_p99_ms and w.end_to_end_p99_ms for w in windows)
