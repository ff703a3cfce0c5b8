"""Disk moves (JBOD) on the live dev cluster with two log dirs per broker, through the
product's KafkaOps (LiveKafka) and the executor's disk-move helpers."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import ConfigResource, ConfigSource
from dev_cluster import DevCluster
from devkit import live
from devkit.polling import wait_until

from apps.kafka_layer.clients import admin_client_create
from apps.kafka_layer.connection import ConnectionSettings
from apps.plans.executor import execution_run
from apps.plans.executor.disk_moves import (
    DISK_THROTTLE_KEY,
    disk_copies_revert,
    disk_moves_done,
    disk_moves_send,
    disk_throttle_configs,
)
from apps.plans.kafka_ops import LiveKafka
from apps.plans.models import PlanState
from apps.plans.services import plan_approve, plan_create

pytestmark = [pytest.mark.django_db, pytest.mark.integration, pytest.mark.own_stack]


def _other_dir(jbod: DevCluster, broker: int, path: str) -> str:
    return next(str(d) for d in jbod.data_dirs(broker) if str(d) != path)


def _disk_throttles(admin, brokers: list[int]) -> dict[int, str]:
    """The disk-move throttle each broker has set dynamically."""
    found = {}
    for broker in brokers:
        resource = ConfigResource("broker", str(broker))
        entry = admin.describe_configs([resource])[resource].result(30).get(DISK_THROTTLE_KEY)
        if entry is not None and entry.source == ConfigSource.DYNAMIC_BROKER_CONFIG.value:
            found[broker] = entry.value
    return found


def test_it_moves_replicas_between_dirs_and_back(kafka_jbod_cluster: DevCluster):
    jbod = kafka_jbod_cluster
    admin = admin_client_create(bootstrap_servers=jbod.bootstrap_servers)
    topic = live.topic_name("diskmove")
    live.topic_create(admin, topic, assignment=[[1, 2]])
    kafka = LiveKafka(connection=ConnectionSettings(bootstrap_servers=jbod.bootstrap_servers))
    try:
        live.fill(jbod.bootstrap_servers, topic, 1, 256 * 1024)
        before = kafka.replica_log_dirs()
        source = before[(topic, 0, 1)]
        # (a) within broker 1, under the disk throttle; (b) onto broker 3 in a named dir.
        targets = {
            (topic, 0, 1): _other_dir(jbod, 1, source),
            (topic, 0, 3): str(jbod.data_dirs(3)[1]),
        }
        kafka.configs_write(disk_throttle_configs(brokers={1, 3}, rate=10_000_000), {})
        retry, refused = disk_moves_send(kafka=kafka, targets=targets)
        assert refused == {} and retry <= {(topic, 0, 3)}
        assert kafka.reassignments_alter({(topic, 0): [1, 2, 3]}) == {(topic, 0): None}

        def landed() -> bool:
            # Re-sent until broker 3 hosts the replica, as kafka-reassign-partitions does.
            disk_moves_send(kafka=kafka, targets={(topic, 0, 3): targets[(topic, 0, 3)]})
            return disk_moves_done(kafka=kafka, targets=targets) == set(targets)

        wait_until(landed, timeout=60, what="both replicas in their target dirs")
        on_disk = [str(d) for d in jbod.data_dirs(1) if (d / f"{topic}-0").exists()]
        assert on_disk == [targets[(topic, 0, 1)]]
        assert _disk_throttles(admin, [1, 3]) == {1: "10000000", 3: "10000000"}

        # (c) rollback: back to the dir before.
        back = {(topic, 0, 1): source}
        assert disk_moves_send(kafka=kafka, targets=back) == (set(), {})
        wait_until(
            lambda: disk_moves_done(kafka=kafka, targets=back) == set(back),
            timeout=60,
            what="the replica back in its dir before",
        )
    finally:
        kafka.configs_write(disk_throttle_configs(brokers={1, 3}, rate=None), {})
        wait_until(lambda: not _disk_throttles(admin, [1, 3]), timeout=10, what="no throttle")
        live.topics_delete(admin, [topic])


def test_it_executes_a_plan_naming_dirs_through_the_executor(
    kafka_jbod_cluster: DevCluster, admin_user
):
    jbod = kafka_jbod_cluster
    bootstrap = jbod.bootstrap_servers
    admin = admin_client_create(bootstrap_servers=bootstrap)
    topic = live.topic_name("diskplan")
    live.topic_create(admin, topic, assignment=[[1, 2], [2, 1]])
    kafka = LiveKafka(connection=ConnectionSettings(bootstrap_servers=bootstrap))
    try:
        live.fill(bootstrap, topic, 2, 256 * 1024)
        before = kafka.replica_log_dirs()
        cluster = live.cluster_registered(
            bootstrap, admin_user, [topic], four_eyes=False, throttle_bytes_per_sec=20_000_000
        )
        # (a) partition 0 within broker 1; (b) partition 1 onto broker 3, in a named dir.
        inner = _other_dir(jbod, 1, before[(topic, 0, 1)])
        onto = str(jbod.data_dirs(3)[1])
        plan = plan_create(
            cluster=cluster,
            origin="operator",
            mode="full",
            reassignment={
                "version": 1,
                "partitions": [
                    {
                        "topic": topic,
                        "partition": 0,
                        "replicas": [1, 2],
                        "log_dirs": [inner, "any"],
                    },
                    {"topic": topic, "partition": 1, "replicas": [3, 1], "log_dirs": [onto, "any"]},
                ],
            },
            assignment_before={(topic, 0): [1, 2], (topic, 1): [2, 1]},
            report={},
            actor=admin_user,
        )
        plan_approve(plan=plan, user=admin_user)
        plan = execution_run(plan=plan, poll_interval=0.5, max_seconds=120)

        assert plan.state == PlanState.COMPLETED
        where = kafka.replica_log_dirs()
        assert where[(topic, 0, 1)] == inner
        assert where[(topic, 1, 3)] == onto
        assert not _disk_throttles(admin, [1, 2, 3])
    finally:
        live.topics_delete(admin, [topic])


def test_it_reports_a_copy_between_dirs_and_stops_it_when_sent_back(
    kafka_jbod_cluster: DevCluster,
):
    jbod = kafka_jbod_cluster
    admin = admin_client_create(bootstrap_servers=jbod.bootstrap_servers)
    topic = live.topic_name("diskstop")
    live.topic_create(admin, topic, assignment=[[1, 2]])
    kafka = LiveKafka(connection=ConnectionSettings(bootstrap_servers=jbod.bootstrap_servers))
    replica = (topic, 0, 1)
    try:
        # Several fetches' worth (1 MiB each): the throttle holds the copy after the first.
        live.fill(jbod.bootstrap_servers, topic, 1, 4 * 1024 * 1024)
        source = kafka.replica_log_dirs()[replica]
        # Slow enough that the copy is still running when it is sent back.
        kafka.configs_write(disk_throttle_configs(brokers={1}, rate=2_000), {})
        wait_until(lambda: _disk_throttles(admin, [1]), timeout=10, what="the disk throttle")
        assert disk_moves_send(kafka=kafka, targets={replica: _other_dir(jbod, 1, source)}) == (
            set(),
            {},
        )
        wait_until(
            lambda: kafka.replica_future_sizes().get(replica, 0) > 0,
            timeout=30,
            what="the future replica's bytes so far",
        )
        assert kafka.replica_log_dirs()[replica] == source

        assert disk_copies_revert(kafka=kafka, targets={replica: _other_dir(jbod, 1, source)}) == {
            replica: source
        }
        wait_until(
            lambda: replica not in kafka.replica_future_sizes(),
            timeout=30,
            what="the future replica dropped",
        )
        assert kafka.replica_log_dirs()[replica] == source
    finally:
        kafka.configs_write(disk_throttle_configs(brokers={1}, rate=None), {})
        wait_until(lambda: not _disk_throttles(admin, [1]), timeout=10, what="no throttle")
        live.topics_delete(admin, [topic])
