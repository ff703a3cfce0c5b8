import io
import uuid

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import OffsetSpec
from devkit import live
from django.core.management import CommandError, call_command

from apps.kafka_layer.clients import admin_client_create
from apps.kafka_layer.demo_traffic import TrafficError, rate_parse, skew_weights


def test_it_parses_rates():
    assert rate_parse("5000/s") == 5000
    assert rate_parse("5120") == 5120
    assert rate_parse("600/m") == 10
    for bad in ("", "fast", "-1/s", "10/week", "0"):
        with pytest.raises(TrafficError):
            rate_parse(bad)


def test_it_builds_skews():
    assert skew_weights("uniform", 4) == [1.0] * 4
    assert skew_weights("zipf:1", 3) == [1.0, 0.5, 1 / 3]
    assert skew_weights("hot:1:0.5", 3) == [0.5, 0.25, 0.25]
    assert skew_weights("weights:1,2,3", 3) == [1.0, 2.0, 3.0]
    for bad in ("zipf", "hot:3:0.5", "hot:1:2", "weights:1,2", "weights:-1,1,1", "pareto:1"):
        with pytest.raises(TrafficError):
            skew_weights(bad, 3)


def test_it_rejects_bad_arguments_before_touching_kafka():
    with pytest.raises(CommandError, match="invalid rate"):
        call_command("demo_traffic", "--rate", "lots", "--bootstrap-servers", "127.0.0.1:1")
    with pytest.raises(CommandError, match="invalid skew"):
        call_command("demo_traffic", "--skew", "weights:1", "--bootstrap-servers", "127.0.0.1:1")


@pytest.mark.integration
def test_it_produces_at_the_rate_and_skew_asked(kafka_cluster):
    topic = f"it-traffic-{uuid.uuid4().hex[:8]}"
    admin = admin_client_create(bootstrap_servers=kafka_cluster.bootstrap_servers)
    try:
        call_command(
            "demo_traffic",
            "--bootstrap-servers", kafka_cluster.bootstrap_servers,
            "--topic", topic,
            "--partitions", "4",
            "--replication-factor", "2",
            "--rate", "2000/s",
            "--record-size", "512",
            "--skew", "weights:5,1,1,1",
            "--duration", "3",
        )  # fmt: skip
        ends = admin.list_offsets({TopicPartition(topic, p): OffsetSpec.latest() for p in range(4)})
        counts = [ends[TopicPartition(topic, p)].result(10).offset for p in range(4)]
        # Every acked record is in the log; the rate and the 5:1:1:1 split hold.
        assert 5400 <= sum(counts) <= 6600
        assert counts[0] > 3 * max(counts[1:])
    finally:
        admin.delete_topics([topic])[topic].result(30)


@pytest.mark.integration
def test_it_caps_what_the_demo_topic_keeps_new_or_existing(kafka_cluster):
    from confluent_kafka.admin import ConfigResource

    topic = f"it-traffic-{uuid.uuid4().hex[:8]}"
    admin = admin_client_create(bootstrap_servers=kafka_cluster.bootstrap_servers)

    def configs() -> dict[str, str]:
        resource = ConfigResource("topic", topic)
        entries = admin.describe_configs([resource])[resource].result(30)
        return {k: entries[k].value for k in ("retention.bytes", "retention.ms", "segment.bytes")}

    args = ["--bootstrap-servers", kafka_cluster.bootstrap_servers, "--topic", topic]
    args += ["--partitions", "2", "--rate", "10/s", "--duration", "0.5"]
    try:
        call_command("demo_traffic", *args)
        assert configs() == {
            "retention.bytes": str(24 * 1024 * 1024),
            "retention.ms": "3600000",
            "segment.bytes": str(8 * 1024 * 1024),
        }
        # A topic left by an older, uncapped run is capped too.
        call_command("demo_traffic", *args, "--retention-bytes", str(4 * 1024 * 1024))
        assert configs()["retention.bytes"] == str(4 * 1024 * 1024)
        assert configs()["segment.bytes"] == str(2 * 1024 * 1024)
    finally:
        admin.delete_topics([topic])[topic].result(30)


@pytest.mark.integration
def test_an_existing_topic_gets_traffic_on_the_partitions_it_has(kafka_cluster):
    from confluent_kafka.admin import ConfigResource

    topic = f"it-traffic-{uuid.uuid4().hex[:8]}"
    admin = admin_client_create(bootstrap_servers=kafka_cluster.bootstrap_servers)
    live.topic_create(admin, topic, partitions=6, rf=1)

    def retention_bytes() -> str:
        resource = ConfigResource("topic", topic)
        return admin.describe_configs([resource])[resource].result(30)["retention.bytes"].value

    args = ["--bootstrap-servers", kafka_cluster.bootstrap_servers, "--topic", topic]
    try:
        uncapped = retention_bytes()
        # Weights for 16 partitions cannot be spread over 6: refused, nothing changed.
        with pytest.raises(CommandError, match=f"topic {topic} has 6 partitions, not 16"):
            call_command("demo_traffic", *args, "--skew", "weights:" + ",".join(["1"] * 16))
        assert retention_bytes() == uncapped

        out = io.StringIO()
        # The default --partitions (16) and a skew: the 6 partitions it has get it all.
        call_command(
            "demo_traffic", *args, "--rate", "600/s", "--skew", "zipf:0.6", "--duration", "2",
            stdout=out,
        )  # fmt: skip
        assert f"topic {topic} exists with 6 partitions" in out.getvalue()
        assert "failed 0" in out.getvalue()
        ends = admin.list_offsets({TopicPartition(topic, p): OffsetSpec.latest() for p in range(6)})
        counts = [ends[TopicPartition(topic, p)].result(10).offset for p in range(6)]
        assert sum(counts) >= 1000 and min(counts) > 0
        assert len(admin.list_topics(topic=topic, timeout=10).topics[topic].partitions) == 6
    finally:
        admin.delete_topics([topic])[topic].result(30)
