"""Sampler (offsets, log dirs, lag, the metrics topic producer) and the Spark aggregation
(Spark's Kafka source with SCRAM's JAAS config or PEM key and trust stores) on the
secured dev cluster, as the balancer's principal."""

import time
import uuid

import pytest
from confluent_kafka import Producer
from devkit import live
from devkit.partition_loads import partition_loads_read
from devkit.polling import wait_until

from apps.metrics.models import AggregationRun
from apps.metrics.services import aggregation_run, metrics_sample

pytestmark = [pytest.mark.django_db, pytest.mark.integration, pytest.mark.spark]

WINDOW_S = 4
SAMPLE_EVERY_S = 1.0


@pytest.fixture
def traffic_topic(secure_cluster, super_admin):
    name = f"it-secure-metrics-{uuid.uuid4().hex[:8]}"
    config = secure_cluster.admin_config()
    live.topic_create(super_admin, name, partitions=3, rf=2, config=config)
    yield name
    super_admin.delete_topics([name])[name].result(30)


def test_it_samples_and_aggregates_the_traffic(
    secured,
    secure_cluster,
    traffic_topic,
    spark,
    settings,
):
    settings.METRICS_WINDOW_SECONDS = WINDOW_S
    settings.METRICS_WINDOW_SLIDE_SECONDS = WINDOW_S  # tumbling, as the windows this test reads
    producer = Producer({**secure_cluster.admin_config(), "linger.ms": 20})
    # Samples through two whole windows and into the next, so those two are final.
    until = (int(time.time()) // WINDOW_S + 3) * WINDOW_S
    rounds = 0
    while True:
        for _ in range(300):
            producer.produce(traffic_topic, b"x" * 100)
        assert producer.flush(30) == 0
        result = metrics_sample(cluster=secured)
        rounds += 1
        assert result.sizes_known  # DescribeLogDirs answered
        if result.ts_ms / 1000 >= until:
            break
        due = result.ts_ms / 1000 + SAMPLE_EVERY_S
        wait_until(lambda t=due: time.time() >= t, 5, 0.1, what="the next sample round")

    run = aggregation_run(cluster=secured, spark=spark)

    assert run.status == AggregationRun.Status.SUCCEEDED, run.error
    assert run.input_rows >= rounds * 3
    loads = partition_loads_read(cluster=secured, topic=traffic_topic)
    assert loads
    assert sum(load.messages_in or 0 for load in loads) > 0
