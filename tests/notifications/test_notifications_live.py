"""A broker stop and start on the real local Kafka cluster reaches a real webhook receiver."""

import time
from functools import partial

import pytest

from apps.clusters.services import cluster_register
from apps.notifications.models import ChannelKind, Delivery, DeliveryState, NotificationChannel
from apps.notifications.signing import signature_verify
from apps.notifications.tasks import delivery_send_task
from tests.clusters.test_sync_live import sync_until as _sync_until
from tests.notifications.conftest import SECRET

pytestmark = [pytest.mark.django_db, pytest.mark.integration]
# A broker's JVM may take a while to start on a busy machine.
sync_until = partial(_sync_until, timeout=60.0)


def deliver_pending() -> None:
    # The deliveries' on-commit enqueue does not run inside a test transaction.
    for pk in Delivery.objects.filter(state=DeliveryState.PENDING).values_list("pk", flat=True):
        delivery_send_task.apply(args=[pk])


def test_it_tells_a_webhook_that_a_broker_died_and_came_back(restore_brokers, receiver):
    kafka = restore_brokers
    cluster = cluster_register(name="dev", bootstrap_servers=kafka.bootstrap_servers)
    NotificationChannel.objects.create(
        cluster=cluster, name="ops", kind=ChannelKind.WEBHOOK, url=receiver.url(), secret=SECRET
    )
    sync_until(cluster, lambda: cluster.brokers.filter(alive=True).count() == 3)

    kafka.stop_broker(3)
    sync_until(cluster, lambda: not cluster.brokers.get(node_id=3).alive)
    deliver_pending()
    kafka.start_broker(3)
    sync_until(cluster, lambda: cluster.brokers.get(node_id=3).alive)
    deliver_pending()

    bodies = [r.json() for r in receiver.requests]
    assert [(b["event"], b["data"]["broker"]) for b in bodies] == [
        ("broker.dead", 3),
        ("broker.back", 3),
    ]
    for request in receiver.requests:
        assert signature_verify(
            secret=SECRET,
            body=request.body,
            timestamp=request.headers["X-Balancer-Timestamp"],
            signature=request.headers["X-Balancer-Signature"],
            now=time.time(),
        )
    assert bodies[0]["summary"].startswith("[dev] Broker 3 (127.0.0.1:")
