"""The offsets every consumer group has committed, by partition."""

import logging
from collections import defaultdict

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException
from confluent_kafka.admin import AdminClient
from django.conf import settings

logger = logging.getLogger(__name__)


def _timeout() -> float:
    return settings.KAFKA_REQUEST_TIMEOUT


def committed_offsets_list(*, admin: AdminClient) -> dict[tuple[str, int], dict[str, int]]:
    """{(topic, partition): {group: committed offset}} for every consumer group.

    OffsetFetch is one request per group (librdkafka takes one group per call);
    they are all sent before any answer is awaited.
    """
    listing = admin.list_consumer_groups(request_timeout=_timeout()).result(_timeout())
    group_ids = sorted(g.group_id for g in listing.valid)
    futures = {
        group_id: admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group_id)], request_timeout=_timeout()
        )[group_id]
        for group_id in group_ids
    }
    committed: dict[tuple[str, int], dict[str, int]] = defaultdict(dict)
    for group_id, future in futures.items():
        try:
            answer = future.result(_timeout())
        except KafkaException as exc:
            logger.warning("offsets of group %s: %s", group_id, exc)
            continue
        for tp in answer.topic_partitions or []:
            if tp.error is None and tp.offset >= 0:
                committed[(tp.topic, tp.partition)][group_id] = tp.offset
    return committed
