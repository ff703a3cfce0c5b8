"""Kafka's own tool applies an exported plan: `scripts/kafka-cli reassign-partitions`
(the pinned kafka-tools jar) executes the reassignment JSON the API exports, and
--verify sees it complete with every partition where the plan put it."""

import subprocess
from pathlib import Path

import pytest
from devkit import live
from devkit.polling import wait_until

from apps.plans.selectors import plan_export_json
from apps.plans.services import plan_request
from tests.plans.test_executor_live import ON_ONE_AND_TWO

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

REPO = Path(__file__).resolve().parents[2]


def kafka_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(REPO / "scripts" / "kafka-cli"), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_applies_an_exported_plan_with_kafka_reassign_partitions(
    kafka_cluster, admin, topics, admin_user, tmp_path
):
    bootstrap = kafka_cluster.bootstrap_servers
    topic = live.topic_name("cli")
    topics.append(topic)
    live.topic_create(admin, topic, assignment=ON_ONE_AND_TWO)
    live.fill(bootstrap, topic, 6, 64 * 1024)
    cluster = live.cluster_registered(bootstrap, admin_user, [topic])
    plan = plan_request(cluster=cluster, user=admin_user, mode="add-brokers", brokers=[3])
    targets = live.plan_targets(plan)
    assert targets and all(3 in r for r in targets.values())
    exported = tmp_path / "plan.json"
    exported.write_text(plan_export_json(plan=plan))

    listed = kafka_cli("topics", "--bootstrap-server", bootstrap, "--list")
    assert listed.returncode == 0 and topic in listed.stdout.split(), listed.stderr

    args = ["--bootstrap-server", bootstrap, "--reassignment-json-file", str(exported)]
    executed = kafka_cli("reassign-partitions", *args, "--execute")
    assert executed.returncode == 0, executed.stderr
    assert "Successfully started partition reassignment" in executed.stdout

    def verified() -> bool:
        out = kafka_cli("reassign-partitions", *args, "--verify")
        assert out.returncode == 0, out.stderr
        return "is still in progress" not in out.stdout

    wait_until(verified, 60, 1, what="kafka-reassign-partitions --verify: complete")
    placed = live.replicas_in_sync(admin, topic, 30)
    for key, replicas in targets.items():
        assert placed[key][0] == replicas
    assert not live.in_flight(bootstrap, [topic])
