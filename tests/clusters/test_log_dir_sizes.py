"""Replica sizes from DescribeLogDirs answers as they come off the wire, through
kafka-python's own parser: asked for every topic (null), future replicas and offline
log dirs left out, a refused request raised."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

import pytest
from kafka.errors import ClusterAuthorizationFailedError
from kafka.protocol.admin.cluster import DescribeLogDirsResponse as Response
from kafka.protocol.parser import KafkaProtocol

from apps.kafka_layer import kafka_python_adapter

VERSION = 4
Result = Response.DescribeLogDirsResult
Topic = Result.DescribeLogDirsTopic
Part = Topic.DescribeLogDirsPartition


def _log_dir(*, error_code=0, topics: dict[str, list[tuple[int, int, bool]]]):
    return Result(
        error_code=error_code,
        log_dir="/var/lib/kafka",
        total_bytes=-1,
        usable_bytes=-1,
        topics=[
            Topic(
                name=name,
                partitions=[
                    Part(partition_index=i, partition_size=size, offset_lag=0, is_future_key=fut)
                    for i, size, fut in parts
                ],
            )
            for name, parts in topics.items()
        ],
    )


ANSWERS = {
    1: [_log_dir(topics={"orders": [(0, 100, False), (1, 7, False)]})],
    # Broker 2 moves orders-0 between its log dirs: the future copy is not counted.
    2: [
        _log_dir(topics={"orders": [(0, 90, False)]}),
        _log_dir(topics={"orders": [(0, 40, True)]}),
        _log_dir(error_code=57, topics={"orders": [(1, 1, False)]}),  # offline dir
    ],
}


def _answer(request, *, results: list, error_code: int = 0):
    """What kafka-python's parser hands back for `request` when the broker answers
    `results`: the request encoded, the answer framed with its header, both through
    kafka-python's own protocol parser."""
    protocol = KafkaProtocol(client_id="test")
    request.API_VERSION = VERSION  # as kafka-python's connection negotiates it
    correlation_id = protocol.send_request(request)
    response = Response(version=VERSION, throttle_time_ms=0, error_code=error_code, results=results)
    response.with_header(correlation_id=correlation_id)
    ((_, answer),) = protocol.receive_bytes(bytes(response.encode(framed=True, header=True)))
    return answer


@pytest.fixture
def refused() -> set[int]:
    """Brokers that answer CLUSTER_AUTHORIZATION_FAILED."""
    return set()


@pytest.fixture
def requests_seen(monkeypatch, refused) -> list:
    seen: list = []

    def send(request, node_id):
        # As kafka-python's manager: the request leaves at once, its answer is awaited.
        seen.append((node_id, request.topics))

        async def answer():
            seen.append(("answer read", node_id))
            if node_id in refused:
                return _answer(request, results=[], error_code=31)
            return _answer(request, results=ANSWERS[node_id])

        return answer()

    def run_to_end(coroutine_function, *args):
        try:
            coroutine_function(*args).send(None)
        except StopIteration as done:
            return done.value
        raise AssertionError("the coroutine waited")

    manager = SimpleNamespace(
        cluster=SimpleNamespace(brokers=lambda: [SimpleNamespace(node_id=b) for b in ANSWERS]),
        send=send,
        run=run_to_end,
    )

    @contextlib.contextmanager
    def client_open(**_kwargs):
        yield SimpleNamespace(_manager=manager)

    monkeypatch.setattr(kafka_python_adapter, "admin_client_open", client_open)
    return seen


def test_it_reads_the_size_of_every_current_replica_by_broker(requests_seen):
    sizes = kafka_python_adapter.log_sizes_describe(bootstrap_servers="k:9092")

    assert sizes == {1: {("orders", 0): 100, ("orders", 1): 7}, 2: {("orders", 0): 90}}
    # One request per broker, for every topic (null), not a list of every partition;
    # every broker asked before the first answer is read.
    assert requests_seen == [(1, None), (2, None), ("answer read", 1), ("answer read", 2)]


def test_it_keeps_the_per_replica_shape_for_the_planner(requests_seen):
    assert kafka_python_adapter.replica_sizes_describe(bootstrap_servers="k:9092") == {
        ("orders", 0, 1): 100,
        ("orders", 0, 2): 90,
        ("orders", 1, 1): 7,
    }


def test_it_raises_when_a_broker_refuses(requests_seen, refused):
    # No sizes known is not every size zero: the round then falls back to offsets.
    refused.add(2)

    with pytest.raises(ClusterAuthorizationFailedError, match="broker 2"):
        kafka_python_adapter.log_sizes_describe(bootstrap_servers="k:9092")


def test_it_reads_each_brokers_log_dirs_and_the_dir_of_each_replica(requests_seen):
    described = kafka_python_adapter.log_dirs_describe(bootstrap_servers="k:9092")

    two = described[2]
    assert [(d.path, d.error_code, d.replicas) for d in two.dirs] == [
        ("/var/lib/kafka", 0, 1),
        ("/var/lib/kafka", 0, 0),  # only a future replica
        ("/var/lib/kafka", 57, 0),  # offline: its replicas are unknown
    ]
    assert two.replica_dirs == {("orders", 0): 0}
    assert two.used_bytes() == [90, 0, 0]
    assert described[1].replica_dirs == {("orders", 0): 0, ("orders", 1): 0}
    assert described[1].used_bytes() == [107]
    assert requests_seen == [(1, None), (2, None), ("answer read", 1), ("answer read", 2)]


def test_it_raises_when_a_broker_refuses_its_log_dirs(requests_seen, refused):
    refused.add(1)

    with pytest.raises(ClusterAuthorizationFailedError, match="broker 1"):
        kafka_python_adapter.log_dirs_describe(bootstrap_servers="k:9092")
