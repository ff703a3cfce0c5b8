"""Sampler and aggregation against the real dev cluster, with traffic at a known rate."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path

import pytest
from confluent_kafka.admin import ConfigResource
from devkit import live
from devkit.partition_loads import partition_loads_read
from devkit.polling import wait_until
from devkit.producer import AckedProducer

from apps.clusters.models import Cluster
from apps.kafka_layer.clients import admin_client_create
from apps.metrics.models import AggregationRun, BrokerLoad
from apps.metrics.services import aggregation_run, metrics_sample

pytestmark = [pytest.mark.django_db, pytest.mark.integration, pytest.mark.spark]

RATE = 300  # messages/s
PARTITIONS = 3
VALUE_BYTES = 1_000
WINDOW_S = 10
SAMPLE_EVERY_S = 2.0


@pytest.fixture
def live_topics(kafka_cluster, settings):
    """A traffic topic and a metrics topic of our own, deleted afterwards."""
    suffix = uuid.uuid4().hex[:8]
    traffic, metrics = f"it-metrics-{suffix}", f"it-metrics-{suffix}-samples"
    settings.METRICS_TOPIC = metrics
    admin = admin_client_create(bootstrap_servers=kafka_cluster.bootstrap_servers)
    live.topic_create(admin, traffic, partitions=PARTITIONS, rf=2)
    yield traffic, metrics
    for future in admin.delete_topics([traffic, metrics]).values():
        try:
            future.result(30)
        except Exception:
            pass  # the metrics topic does not exist if the test failed early


# The group reads in a process of its own: in the test's process the sampler, the
# producer thread and the Spark driver share one interpreter lock, and under load a
# consumer thread behind them fell seconds behind within a window.
CONSUMER = """
import os, signal, sys
from confluent_kafka import Consumer

bootstrap, group, topic, progress = sys.argv[1:5]
stopping = []
signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
consumer = Consumer(
    {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "auto.commit.interval.ms": 500,
    }
)
consumer.subscribe([topic])
consumed = 0
while not stopping:
    messages = consumer.consume(500, timeout=0.2)
    consumed += sum(1 for m in messages if m.error() is None)
    if messages:
        with open(progress + ".tmp", "w") as f:
            f.write(str(consumed))
        os.replace(progress + ".tmp", progress)
consumer.close()
"""


class Traffic:
    """An acks=all producer at RATE msg/s of VALUE_BYTES values and a consumer group
    reading them (in a process of its own)."""

    def __init__(self, bootstrap: str, topic: str, progress: Path) -> None:
        self.bootstrap, self.topic = bootstrap, topic
        self.group = f"{topic}-readers"
        self.progress = progress
        # Each partition gets a third of every window: round robin at a fixed rate, as
        # the sticky partitioner would send a whole catch-up burst to one partition.
        # Batching keeps per-record overhead on disk around 2 % of 1 kB.
        self.producer = AckedProducer(
            bootstrap=bootstrap,
            topic=topic,
            partitions=PARTITIONS,
            rate_per_partition=dict.fromkeys(range(PARTITIONS), RATE / PARTITIONS),
            record_size=VALUE_BYTES,
            linger_ms=50,
            keys_kept=False,
        )
        self.consumer: subprocess.Popen | None = None

    @property
    def produced(self) -> int:
        return self.producer.sent

    @property
    def consumed(self) -> int:
        try:
            return int(self.progress.read_text() or 0)
        except FileNotFoundError:
            return 0

    def __enter__(self) -> Traffic:
        self.started = self.producer.start().started_wait()
        self.consumer = subprocess.Popen(
            [
                *(sys.executable, "-c", CONSUMER),
                *(self.bootstrap, self.group, self.topic, str(self.progress)),
            ],
            stdin=subprocess.DEVNULL,
        )
        return self

    def __exit__(self, *exc) -> None:
        self.producer.stop()
        if self.consumer is not None:
            self.consumer.terminate()
            try:
                self.consumer.wait(30)
            except subprocess.TimeoutExpired:
                self.consumer.kill()
                self.consumer.wait(10)


def sample_until(cluster: Cluster, until: float) -> int:
    """Sample every SAMPLE_EVERY_S until a round has been taken at or after `until`."""
    rounds = 0
    while True:
        started = time.monotonic()
        result = metrics_sample(cluster=cluster)
        rounds += 1
        if result.ts_ms / 1000 >= until:
            return rounds
        # The scenario: a sample round every SAMPLE_EVERY_S, as beat takes them.
        time.sleep(max(0.0, SAMPLE_EVERY_S - (time.monotonic() - started)))


def test_it_measures_bytes_in_and_out_of_known_traffic(
    kafka_cluster, live_topics, spark, settings, tmp_path
):
    settings.METRICS_WINDOW_SECONDS = WINDOW_S
    settings.METRICS_WINDOW_SLIDE_SECONDS = WINDOW_S
    traffic_topic, metrics_topic = live_topics
    cluster = Cluster.objects.create(name="it", bootstrap_servers=kafka_cluster.bootstrap_servers)

    progress = tmp_path / "consumed"
    with Traffic(kafka_cluster.bootstrap_servers, traffic_topic, progress) as traffic:
        # The group reads before the measured windows start, so bytes out are there.
        wait_until(lambda: traffic.consumed, 60, 0.2, what="the consumer group reading")
        traffic_from = time.time()
        # Three whole windows after the one we start in, plus a sample in the next.
        first_full = (int(traffic_from) // WINDOW_S + 1) * WINDOW_S
        rounds = sample_until(cluster, first_full + 3 * WINDOW_S)
        traffic_until = time.time()

    run = aggregation_run(cluster=cluster, spark=spark)

    assert run.status == AggregationRun.Status.SUCCEEDED, run.error
    assert run.malformed_rows == 0 and run.late_rows == 0
    assert run.input_rows >= rounds * 3
    # The producer kept pace.
    assert traffic.produced >= 0.95 * RATE * (traffic_until - traffic.started)
    assert traffic.consumed > 0

    per_window: dict = defaultdict(
        lambda: {
            "bytes_in": 0.0,
            "bytes_out": 0.0,
            "messages_in": 0.0,
            "samples": [],
            "partition_bytes_in": [],
        }
    )
    for load in partition_loads_read(cluster=cluster, topic=traffic_topic):
        totals = per_window[load.window_start.timestamp()]
        totals["bytes_in"] += load.bytes_in or 0.0
        totals["bytes_out"] += load.bytes_out or 0.0
        totals["messages_in"] += load.messages_in or 0.0
        totals["samples"].append(load.samples)
        totals["partition_bytes_in"].append(load.bytes_in or 0.0)
    full = {w: t for w, t in per_window.items() if first_full <= w < first_full + 3 * WINDOW_S}
    assert len(full) == 3, sorted(per_window)
    produced_bytes = RATE * VALUE_BYTES
    for window, t in sorted(full.items()):
        # A sample every 2 s: 4 or 5 per 10 s window, for each of the 3 partitions.
        assert len(t["samples"]) == 3 and min(t["samples"]) >= 4, (window, t["samples"])
        assert t["messages_in"] == pytest.approx(RATE, rel=0.10), window
        assert t["bytes_in"] == pytest.approx(produced_bytes, rel=0.10), window
        # Each partition gets a third (round robin), which the per-broker check relies on.
        for bytes_in in t["partition_bytes_in"]:
            assert bytes_in == pytest.approx(produced_bytes / PARTITIONS, rel=0.15), (window, t)
        # The group keeps up with the producer, so it reads what comes in.
        assert t["bytes_out"] == pytest.approx(t["bytes_in"], rel=0.15), window

    # Broker loads follow the load model over every partition of the cluster.
    window = max(full)
    loads = [
        p for p in partition_loads_read(cluster=cluster) if p.window_start.timestamp() == window
    ]
    brokers = [
        b
        for b in BrokerLoad.objects.filter(cluster=cluster)
        if b.window_start.timestamp() == window
    ]
    assert {b.broker_id for b in brokers} == {1, 2, 3}
    assert sum(b.network_in for b in brokers) == pytest.approx(
        sum((p.bytes_in or 0) * len(p.replicas) for p in loads)
    )
    assert sum(b.replicas for b in brokers) == sum(len(p.replicas) for p in loads)
    assert sum(b.leaders for b in brokers) == sum(1 for p in loads if p.leader in p.replicas)
    traffic_leaders = {p.leader for p in loads if p.topic == traffic_topic}
    for b in brokers:
        if b.broker_id in traffic_leaders:
            # bytes_out + replication
            assert b.network_out >= 0.9 * produced_bytes / PARTITIONS, (b.broker_id, loads)

    # The metrics topic was created with time retention.
    admin = admin_client_create(bootstrap_servers=kafka_cluster.bootstrap_servers)
    resource = ConfigResource(ConfigResource.Type.TOPIC, metrics_topic)
    configs = admin.describe_configs([resource])[resource].result(30)
    assert configs["cleanup.policy"].value == "delete"
    assert int(configs["retention.ms"].value) > 0

    # A second run reads only the new records and writes no window twice.
    second = aggregation_run(cluster=cluster, spark=spark)
    assert second.status == AggregationRun.Status.SUCCEEDED, second.error
    assert second.output_rows == 0
    assert second.input_rows < run.input_rows
