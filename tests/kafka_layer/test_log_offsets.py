"""A sample round's ListOffsets: one request per leader (split when large), both specs
sent before any answer is read, and a partition without an answer left out."""

from __future__ import annotations

from confluent_kafka import OFFSET_BEGINNING, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, ListOffsetsResultInfo
from confluent_kafka.cimpl import _AdminClientImpl

from apps.kafka_layer import log_offsets
from apps.kafka_layer.log_offsets import log_offsets_list
from apps.kafka_layer.partition_leaders import PartitionLeader


class _Answering(_AdminClientImpl):
    """librdkafka's side of AdminClient.list_offsets, answering each request at once."""

    def list_offsets(self, topic_partitions, future, **kwargs) -> None:
        self.requests.append([(tp.topic, tp.partition, tp.offset) for tp in topic_partitions])
        if any(tp.topic == self.failing_topic for tp in topic_partitions):
            future.set_exception(KafkaException(KafkaError(KafkaError._TIMED_OUT)))
            return
        future.set_result(
            {
                TopicPartition(tp.topic, tp.partition): (
                    KafkaError(KafkaError.NOT_LEADER_FOR_PARTITION)
                    if (tp.topic, tp.partition) in self.leaderless
                    else ListOffsetsResultInfo(
                        (10 if tp.offset == OFFSET_BEGINNING else 100) + tp.partition, -1, -1
                    )
                )
                for tp in topic_partitions
            }
        )


class FakeAdmin(AdminClient, _Answering):
    def __init__(self, *, leaderless=(), failing_topic=""):
        super().__init__({"bootstrap.servers": "127.0.0.1:9", "log_level": 0})
        self.requests: list[list[tuple[str, int, int]]] = []
        self.leaderless = set(leaderless)
        self.failing_topic = failing_topic


def _partitions(*, topic: str, leaders: list[int]) -> list[PartitionLeader]:
    return [
        PartitionLeader(topic=topic, partition=i, leader=leader, replicas=[max(leader, 1)])
        for i, leader in enumerate(leaders)
    ]


def test_it_reads_start_and_end_offsets_of_every_partition_with_a_leader():
    admin = FakeAdmin(leaderless={("t", 1)})

    partitions = _partitions(topic="t", leaders=[1, 2, -1])
    start, end = log_offsets_list(admin=admin, partitions=partitions)

    # Partition 1 just lost its leader (an error answer), partition 2 has none.
    assert start == {("t", 0): 10}
    assert end == {("t", 0): 100}
    assert {tp[:2] for request in admin.requests for tp in request} == {("t", 0), ("t", 1)}


def test_it_sends_one_request_per_leader_split_when_large(monkeypatch):
    monkeypatch.setattr(log_offsets, "OFFSETS_REQUEST_PARTITIONS", 2)
    admin = FakeAdmin()

    start, end = log_offsets_list(
        admin=admin, partitions=_partitions(topic="t", leaders=[1, 1, 1, 2, 2])
    )

    assert sorted(len(r) for r in admin.requests) == [1, 1, 2, 2, 2, 2]
    for request in admin.requests:
        leaders = {[1, 1, 1, 2, 2][index] for _, index, _ in request}
        assert len(leaders) == 1 and len({spec for *_, spec in request}) == 1
    assert end == {("t", i): 100 + i for i in range(5)}
    assert start == {("t", i): 10 + i for i in range(5)}


def test_it_leaves_out_the_partitions_of_a_failed_request_only():
    admin = FakeAdmin(failing_topic="bad")
    partitions = _partitions(topic="good", leaders=[1]) + _partitions(topic="bad", leaders=[2])

    start, end = log_offsets_list(admin=admin, partitions=partitions)

    assert start == {("good", 0): 10} and end == {("good", 0): 100}
