"""The metrics topic, created when missing: time retention, up to three replicas."""

import logging

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic
from django.conf import settings

from .authorization import KafkaNotAuthorized, authorization_denied, missing_acl_text

logger = logging.getLogger(__name__)


def _timeout() -> float:
    return settings.KAFKA_REQUEST_TIMEOUT


def metrics_topic_ensure(
    *, admin: AdminClient, topic: str, existing: set[str], brokers: int
) -> None:
    """Create the metrics topic if missing: time retention, min(3, `brokers`) replicas.

    `brokers` counts the alive brokers, so a small or degraded cluster gets a topic
    it can hold fully replicated. A drain that leaves fewer brokers than its replicas
    lowers its RF (plans.services.drain_fit), so it never blocks one.
    """
    if topic in existing:
        return
    new = NewTopic(
        topic,
        num_partitions=settings.METRICS_TOPIC_PARTITIONS,
        replication_factor=max(1, min(3, brokers)),
        config={
            "cleanup.policy": "delete",
            "retention.ms": str(settings.METRICS_TOPIC_RETENTION_MS),
        },
    )
    try:
        admin.create_topics([new], request_timeout=_timeout())[topic].result(_timeout())
    except KafkaException as exc:
        if authorization_denied(exc):
            raise KafkaNotAuthorized(missing_acl_text(api="CreateTopics", resource=topic)) from exc
        if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
            raise
    logger.info("created metrics topic %s", topic)
