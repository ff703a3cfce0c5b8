"""Unplaceable partitions on the real dev cluster.

A topic of RF 3 on the 3-broker cluster (like `__balancer_metrics` created while all
three were up) and one of RF 2; broker 3 stops. The self-healing plan moves the RF 2
replicas off broker 3 and lists every RF 3 partition as unplaced, with its reason, in
the API and on the plan page.
"""

import pytest
from devkit import live
from devkit.polling import wait_until

from apps.clusters.services import cluster_sync
from apps.plans.selectors import plan_shortfalls_get
from apps.plans.services import plan_request

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


def test_it_lists_partitions_with_more_replicas_than_alive_brokers_as_unplaced(
    kafka_cluster, restore_brokers, admin, topics, admin_user, client
):
    wide, narrow = live.topic_name("wide"), live.topic_name("narrow")
    topics.extend([wide, narrow])
    live.topic_create(admin, wide, partitions=2, rf=3)
    live.topic_create(admin, narrow, partitions=6, rf=2)
    cluster = live.cluster_registered(kafka_cluster.bootstrap_servers, admin_user, [wide, narrow])
    kafka_cluster.stop_broker(3)

    def broker_3_seen_down() -> bool:
        assert cluster_sync(cluster=cluster), cluster.last_sync_error
        return not cluster.brokers.get(node_id=3).alive

    wait_until(broker_3_seen_down, 60, 1, what="the sync seeing broker 3 down")

    plan = plan_request(cluster=cluster, user=admin_user, mode="fix-offline", reason="test")

    unplaced = {u.partition: u.reason for u in plan_shortfalls_get(plan=plan).unplaced_partitions}
    assert set(unplaced) == {f"{wide}-0", f"{wide}-1"}
    assert all("more replicas than alive brokers" in r for r in unplaced.values())
    assert {m.topic for m in plan.moves.all()} == {narrow}
    client.force_login(admin_user)
    body = client.get(f"/api/plans/{plan.pk}/").json()
    assert {u["partition"] for u in body["unplaced_partitions"]} == set(unplaced)
    page = client.get(f"/clusters/{cluster.name}/plans/{plan.pk}/").content.decode()
    assert f'data-partition="{wide}-0"' in page and f'data-partition="{wide}-1"' in page
