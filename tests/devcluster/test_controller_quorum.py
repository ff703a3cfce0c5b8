"""Three KRaft controllers: the active one dies, another takes over, clients never notice."""

from __future__ import annotations

import pytest
from dev_cluster import DevCluster

from .kafka_io import round_trip


@pytest.mark.integration
def test_it_elects_a_new_active_controller_and_keeps_serving_when_the_leader_is_killed(
    kafka_quorum_cluster: DevCluster,
) -> None:
    cluster = kafka_quorum_cluster
    assert cluster.controller_ids == [100, 101, 102]
    old = cluster.wait_for_active_controller(timeout=60)

    cluster.stop_controller(old, kill=True)
    try:
        assert cluster.node_pid(old) is None
        new = cluster.wait_for_active_controller(timeout=60, not_in={old})

        assert new in {100, 101, 102} - {old}
        # Topic creation goes through the new controller; produce/consume through brokers.
        assert round_trip(cluster.bootstrap_servers) == [f"k{i}" for i in range(20)]
        assert cluster.metadata_brokers() == {1, 2, 3}
    finally:
        cluster.start_controller(old)

    assert cluster.running_controllers() == {100, 101, 102}
