"""Every partition with its leader and replicas, read from one metadata request."""

from typing import NamedTuple

from confluent_kafka.admin import AdminClient
from django.conf import settings


class PartitionLeader(NamedTuple):
    """One per partition and round: a tuple, as a frozen dataclass costs far more to create."""

    topic: str
    partition: int
    leader: int
    replicas: list[int]


def partitions_describe(*, admin: AdminClient) -> tuple[list[PartitionLeader], set[str], int]:
    """(partitions with a leader, every topic name, live broker count) from one metadata request."""
    md = admin.list_topics(timeout=settings.KAFKA_REQUEST_TIMEOUT)
    partitions: list[PartitionLeader] = []
    for name, topic in md.topics.items():
        if topic.error is not None:
            continue
        for index, p in topic.partitions.items():
            # librdkafka builds fresh metadata objects per call: no copy needed.
            partitions.append(PartitionLeader(name, index, p.leader, p.replicas))
    return partitions, set(md.topics), len(md.brokers)
