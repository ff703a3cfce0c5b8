"""One topic's offsets per partition: the end now, and the first record at or after a time."""

from dataclasses import dataclass

from confluent_kafka import TopicPartition
from confluent_kafka.admin import OffsetSpec
from django.conf import settings

from .clients import admin_client_create
from .connection import ConnectionSettings


@dataclass(frozen=True)
class TopicOffsets:
    # {partition: offset}; `at_time` holds -1 where no record is at or after the time.
    end: dict[int, int]
    at_time: dict[int, int]


def topic_offsets_read(
    *, connection: ConnectionSettings, topic: str, since_ms: int, known: set[int]
) -> TopicOffsets | None:
    """Each partition's end offset, and for the partitions not in `known` the offset
    of the first record at or after `since_ms`. None when the topic does not exist."""
    timeout = settings.KAFKA_REQUEST_TIMEOUT
    admin = admin_client_create(connection=connection)
    md = admin.list_topics(topic=topic, timeout=timeout)
    t = md.topics.get(topic)
    if t is None or t.error is not None:
        return None
    partitions = sorted(t.partitions)

    def listed(indexes: list[int], spec: OffsetSpec) -> dict[int, int]:
        if not indexes:
            return {}
        request = {TopicPartition(topic, p): spec for p in indexes}
        futures = admin.list_offsets(request, request_timeout=timeout)
        return {tp.partition: f.result(timeout).offset for tp, f in futures.items()}

    return TopicOffsets(
        end=listed(partitions, OffsetSpec.latest()),
        at_time=listed(
            [p for p in partitions if p not in known], OffsetSpec.for_timestamp(since_ms)
        ),
    )
