"""The engine's per-broker figures for readers outside the planner."""

import pytest

from apps.balancer import engine


def test_it_models_a_snapshot_with_loads():
    snapshot = {
        "brokers": [{"id": 1, "rack": None, "alive": True}, {"id": 2, "rack": None, "alive": True}],
        "partitions": [
            {
                "topic": "t",
                "partition": 0,
                "replicas": [2, 1],
                "leader": 2,
                "load": {"bytes_in": 10.0, "bytes_out": 5.0, "messages_in": 1.0, "size": 100},
            }
        ],
    }
    loads = engine.broker_loads(snapshot)
    assert loads[2]["network_out"] == 15.0 and loads[1]["network_out"] == 0.0
    assert loads[1]["network_in"] == loads[2]["network_in"] == 10.0
    assert engine.propose(snapshot).report["partitions"] == 1  # the same snapshot plans


def test_it_rates_balance_as_the_busiest_broker_over_the_mean():
    assert engine.balance_ratio([8, 6, 2]) == pytest.approx(8 / (16 / 3))
    assert engine.balance_ratio([5.0, 5.0]) == 1.0
    assert engine.balance_ratio([0, 0, 0]) is None  # nothing to balance
    assert engine.balance_ratio([]) is None


def test_a_dead_broker_leads_nothing_and_has_no_traffic():
    load = {"bytes_in": 10.0, "bytes_out": 5.0, "messages_in": 1.0, "size": 100}
    snapshot = {
        "brokers": [
            {"id": 1, "rack": None, "alive": True},
            {"id": 2, "rack": None, "alive": True},
            {"id": 3, "rack": None, "alive": False},
        ],
        "partitions": [
            # Broker 3 is the preferred leader of both; Kafka elected the next alive one.
            {"topic": "t", "partition": 0, "replicas": [3, 1], "leader": 1, "load": load},
            {"topic": "t", "partition": 1, "replicas": [3, 2, 1], "leader": 2, "load": load},
        ],
    }
    loads = engine.broker_loads(snapshot)
    assert loads[3]["leaders"] == 0 and loads[3]["network_in"] == 0.0
    assert loads[3]["network_out"] == 0.0 and loads[3]["leader_bytes_in"] == 0.0
    assert loads[1]["leaders"] == 1 and loads[2]["leaders"] == 1
    assert loads[3]["replicas"] == 2 and loads[3]["disk"] == 200  # its data is still there
