"""On a dev cluster whose brokers have two log dirs each (`up --log-dirs 2`): the sync
finds every broker's two dirs with their sizes, and each replica in the dir Kafka keeps
it in, as kafka-python's own DescribeLogDirs and the brokers' disks say."""

from __future__ import annotations

import pytest
from dev_cluster import DevCluster
from devkit import live

from apps.clusters.models import Cluster, Topic
from apps.clusters.placement import placement_unpack
from apps.clusters.replica_dirs import replica_dirs_unpack
from apps.clusters.services import cluster_sync
from apps.kafka_layer.clients import admin_client_create
from apps.kafka_layer.kafka_python_adapter import admin_client_open

pytestmark = [pytest.mark.django_db, pytest.mark.integration, pytest.mark.own_stack]

# 6 partitions of 2 replicas: each broker holds 4, which Kafka spreads over its two dirs
# (a new replica goes to the dir with the fewest partitions).
ASSIGNMENT = [[1, 2], [2, 3], [3, 1]] * 2
BROKERS = (1, 2, 3)


def _kafka_says(bootstrap: str) -> dict[int, dict[str, dict]]:
    """{broker: {dir path: {"total", "replicas": {(topic, partition): size}}}} from
    kafka-python's own describe_log_dirs (its objects, not our decoder)."""
    seen: dict[int, dict[str, dict]] = {}
    with admin_client_open(bootstrap_servers=bootstrap) as client:
        for answer in client.describe_log_dirs(brokers=list(BROKERS)):
            dirs = seen.setdefault(answer["broker"], {})
            for log_dir in answer["log_dirs"]:
                assert log_dir["error_code"] == 0
                dirs[log_dir["log_dir"]] = {
                    "total": log_dir["total_bytes"],
                    "replicas": {
                        (t["name"], p["partition_index"]): p["partition_size"]
                        for t in log_dir["topics"]
                        for p in t["partitions"]
                        if not p["is_future_key"]
                    },
                }
    return seen


def _on_disk(cluster: DevCluster, broker: int, topic: str) -> dict[int, str]:
    """{partition: path of the log dir holding its directory} on the broker's disks."""
    found = {}
    for data in cluster.data_dirs(broker):
        for path in data.glob(f"{topic}-*"):
            index = path.name.rpartition("-")[2]
            if index.isdigit():
                found[int(index)] = str(data)
    return found


def test_it_syncs_every_brokers_log_dirs_and_each_replicas_dir(kafka_jbod_cluster: DevCluster):
    jbod = kafka_jbod_cluster
    bootstrap = jbod.bootstrap_servers
    admin = admin_client_create(bootstrap_servers=bootstrap)
    topic = live.topic_name("jbod")
    live.topic_create(admin, topic, assignment=ASSIGNMENT)
    try:
        live.fill(bootstrap, topic, len(ASSIGNMENT), 32 * 1024)
        cluster = Cluster.objects.create(name="jbod", bootstrap_servers=bootstrap)

        assert cluster_sync(cluster=cluster), cluster.last_sync_error
        kafka = _kafka_says(bootstrap)

        brokers = {b.node_id: b for b in cluster.brokers.all()}
        row = Topic.objects.get(cluster=cluster, name=topic)
        placed = list(placement_unpack(packed=row.placement))
        dirs = replica_dirs_unpack(
            packed=row.replica_dirs, replica_counts=[len(r) for _, _, r, _ in placed]
        )
        assert dirs is not None, "no replica dirs stored"
        for broker_id in BROKERS:
            stored = brokers[broker_id].log_dirs
            said = kafka[broker_id]
            # Both dirs, sorted by path, online, with the volume's figures and the bytes
            # of the replicas Kafka lists in each.
            assert [d["path"] for d in stored] == sorted(str(p) for p in jbod.data_dirs(broker_id))
            assert sorted(said) == [d["path"] for d in stored]
            for d in stored:
                assert d["online"] and d["total"] == said[d["path"]]["total"]
                assert 0 < d["usable"] <= d["total"]
                assert d["used"] == sum(said[d["path"]]["replicas"].values())
            # Each of its replicas of the topic in the dir Kafka lists it in, and on disk.
            on_disk = _on_disk(jbod, broker_id, topic)
            assert len(on_disk) == 4 and len(set(on_disk.values())) == 2  # both dirs used
            for (index, _leader, replicas, _isr), replica_dirs in zip(placed, dirs, strict=True):
                if broker_id not in replicas:
                    continue
                path = stored[replica_dirs[replicas.index(broker_id)]]["path"]
                assert path == on_disk[index], (broker_id, index)
                assert said[path]["replicas"][(topic, index)] >= 32 * 1024
    finally:
        live.topics_delete(admin, [topic])
