"""After a broker restart the dev cluster hands leadership back to preferred replicas, and
sizes broker heaps to the partitions they hold (or as told)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient
from dev_cluster import DevCluster
from devkit import live
from devkit.polling import wait_until

from tests.devcluster.test_dev_cluster import run_cli

# Broker 2 is the preferred leader (first replica) of partitions 0, 1, 4 and 5.
ASSIGNMENT = [[2, 1], [2, 3], [1, 2], [3, 2], [2, 3], [2, 1]]


def leaders(admin: AdminClient, topic: str) -> dict[int, int]:
    meta = admin.list_topics(topic=topic, timeout=10).topics[topic]
    return {p: part.leader for p, part in meta.partitions.items()}


@pytest.mark.integration
def test_it_gives_leadership_back_to_a_restarted_broker(restore_brokers: DevCluster) -> None:
    cluster = restore_brokers
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    topic = f"it-devcluster-{uuid.uuid4().hex[:8]}"
    live.topic_create(admin, topic, assignment=ASSIGNMENT)
    preferred = {p: replicas[0] for p, replicas in enumerate(ASSIGNMENT)}
    try:
        wait_until(lambda: leaders(admin, topic) == preferred, 30, 0.2, what="preferred leaders")
        cluster.stop_broker(2)  # controlled shutdown moves its leaderships away
        wait_until(lambda: 2 not in leaders(admin, topic).values(), 30, 0.2, what="moved")

        election = cluster.start_broker(2)

        # Kafka's own rebalance would wait up to 5 minutes: this is the dev cluster's doing.
        assert leaders(admin, topic) == preferred
        assert election is not None and election.elected >= 4 and election.pending == 0
    finally:
        admin.delete_topics([topic])


def test_it_sizes_broker_heap_to_the_replicas_held(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("KAFKA_DEV_BROKER_HEAP", raising=False)
    cluster = DevCluster(run_dir=tmp_path)
    data = cluster.node_dir(1) / "data"
    for i in range(12_000):
        (data / f"t{i // 100}-{i % 100}").mkdir(parents=True)
    (data / "__cluster_metadata-0").mkdir()
    (data / "not-a-partition").mkdir()

    assert cluster.replicas_held(1) == 12_000
    assert cluster.heap(1) == "-Xmx1262m"  # 512 MB + 64 KB x 12,000
    assert cluster.heap(2) == "-Xmx1024m"  # nothing held yet: the floor
    assert cluster.heap(100) == "-Xmx256m"  # controllers are not sized


def test_it_sizes_broker_heap_to_the_partitions_hint_until_the_log_dir_holds_more(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.delenv("KAFKA_DEV_BROKER_HEAP", raising=False)
    cluster = DevCluster(run_dir=tmp_path, partitions_hint=20_000)
    data = cluster.node_dir(1) / "data"
    for i in range(25_000):
        (data / f"t{i // 1000}-{i % 1000}").mkdir(parents=True)

    assert cluster.heap(2) == "-Xmx1762m"  # empty: sized for 20,000 (512 MB + 64 KB each)
    assert cluster.heap(1) == "-Xmx2074m"  # holds 25,000: sized to those
    assert DevCluster(run_dir=tmp_path, partitions_hint=0).heap(2) == "-Xmx1024m"


def test_it_rejects_a_negative_partitions_hint(tmp_path: Path) -> None:
    env = {**os.environ, "KAFKA_DEV_DIR": str(tmp_path / "kafka")}

    result = run_cli("up", "--no-redis", "--partitions-hint", "-5", env=env)

    assert result.returncode == 1
    assert "--partitions-hint must be 0 or more, got -5" in result.stderr


def test_it_takes_the_broker_heap_from_the_option_or_the_environment(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("KAFKA_DEV_BROKER_HEAP", "768m")

    assert DevCluster(run_dir=tmp_path).heap(1) == "-Xmx768m"
    assert DevCluster(run_dir=tmp_path, broker_heap="2G").heap(3) == "-Xmx2g"


def test_it_rejects_a_malformed_broker_heap(tmp_path: Path) -> None:
    env = {**os.environ, "KAFKA_DEV_DIR": str(tmp_path / "kafka")}

    result = run_cli("up", "--no-redis", "--broker-heap", "lots", env=env)

    assert result.returncode == 1
    assert "broker heap must look like 768m or 2g, got 'lots'" in result.stderr
