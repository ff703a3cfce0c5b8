"""Benchmark: the in-process part of one metrics sample round, without Kafka's answer time.

A sample round (apps/metrics/services/sampling.py) asks Kafka for metadata, ListOffsets
twice, DescribeLogDirs and the consumer groups' offsets, builds one record per partition
and produces them. Here every Kafka answer is ready at once, so what is timed is only
this process's own work, the clients' Python side included, step by step, for P
partitions on B brokers. confluent-kafka's AdminClient runs its own Python layer over
a fake of librdkafka's side that hands back what librdkafka's C code builds (fresh
metadata objects; per ListOffsets request a dict of TopicPartition to
ListOffsetsResultInfo). kafka-python decodes each broker's DescribeLogDirs answer from
the bytes Kafka would send. Left out: librdkafka's own C work (encoding requests,
parsing answers; --compare-real measures it) and the network.

- metadata to partitions (partitions_describe);
- the two ListOffsets requests built and their answers read (log_offsets_list);
- replica sizes from DescribeLogDirs answers, decoded (log_sizes_describe);
- committed offsets of G consumer groups each reading C partitions;
- one record per partition built (metric_records_build);
- the records handed to the producer (records_publish: produce_batch calls into
  librdkafka's queue; the delivery to brokers, flush, is Kafka's time and is left out).

    .venv/bin/python bench/bench_sample_round.py --partitions 10000 --brokers 3
    .venv/bin/python bench/bench_sample_round.py --partitions 200000 --brokers 270
    .venv/bin/python bench/bench_sample_round.py --compare-real 127.0.0.1:9092  # a real cluster

Prints a calibration loop timed in the same run (bench_control_plane.py's), so runs on
a noisy machine can be compared. The real round on the dev cluster (Kafka's answers
included) is timed by tests/zz_scale/test_ten_thousand_partitions_live.py.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import sys
import time
from concurrent.futures import Future
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_control_plane import calibrate  # noqa: E402
from confluent_kafka import TopicPartition  # noqa: E402
from confluent_kafka.admin import (  # noqa: E402
    AdminClient,
    BrokerMetadata,
    ClusterMetadata,
    ListOffsetsResultInfo,
    PartitionMetadata,
    TopicMetadata,
)
from confluent_kafka.cimpl import _AdminClientImpl  # noqa: E402

RF = 3
LOG_DIRS_VERSION = 5  # what Kafka 4.3 answers


def _done(value) -> Future:
    future: Future = Future()
    future.set_result(value)
    return future


class _AnsweringImpl(_AdminClientImpl):
    """librdkafka's side of the admin client, answering at once.

    AdminClient's own Python layer runs unchanged on top of it (see FakeAdmin), so
    what it does per partition is counted: for ListOffsets the request dict checked,
    a second TopicPartition per partition, one Future per partition created, set
    running and completed from the answer. What librdkafka hands back is built here
    as its C code builds it: fresh metadata objects per call, and for ListOffsets one
    dict {TopicPartition: ListOffsetsResultInfo} set on the request's future.
    """

    def list_topics(self, *args, **kwargs) -> ClusterMetadata:
        md = ClusterMetadata()
        for broker_id in self._broker_ids:
            b = BrokerMetadata()
            b.id, b.host, b.port = broker_id, f"broker-{broker_id}", 9092
            md.brokers[broker_id] = b
        for name, placement in self._placement.items():
            t = TopicMetadata()
            t.topic = name
            for index, replicas in placement:
                p = PartitionMetadata()
                p.id, p.leader = index, replicas[0]
                p.replicas, p.isrs = list(replicas), list(replicas)
                t.partitions[index] = p
            md.topics[name] = t
        return md

    def list_offsets(self, topic_partitions, future, **kwargs) -> None:
        future.set_result(
            {
                TopicPartition(tp.topic, tp.partition): ListOffsetsResultInfo(1_000, -1, -1)
                for tp in topic_partitions
            }
        )


class FakeAdmin(AdminClient, _AnsweringImpl):
    """confluent-kafka's AdminClient for what a sample round calls, answering at once."""

    def __init__(self, *, brokers: int, partitions: int, groups: int, group_partitions: int):
        # A real client handle (nothing listens there; nothing is sent to it).
        super().__init__({"bootstrap.servers": "127.0.0.1:9", "log_level": 0})
        rng = random.Random(42)
        per_topic = 25
        self._placement: dict[str, list[tuple[int, tuple[int, ...]]]] = {}
        for i in range(partitions):
            replicas = tuple(rng.sample(range(1, brokers + 1), min(RF, brokers)))
            name = f"topic-{i // per_topic:05d}"
            self._placement.setdefault(name, []).append((i % per_topic, replicas))
        self._broker_ids = list(range(1, brokers + 1))
        keys = [(t, index) for t, ps in self._placement.items() for index, _ in ps]
        self.groups = {
            f"group-{g}": rng.sample(keys, min(group_partitions, len(keys))) for g in range(groups)
        }

    def list_consumer_groups(self, request_timeout=None):
        valid = [SimpleNamespace(group_id=g) for g in self.groups]
        return _done(SimpleNamespace(valid=valid))

    def list_consumer_group_offsets(self, requests, request_timeout=None):
        group = requests[0].group_id
        tps = [TopicPartition(t, p, 500) for t, p in self.groups[group]]
        return {group: _done(SimpleNamespace(topic_partitions=tps))}

    def log_dirs(self) -> dict[int, bytes]:
        """Each broker's DescribeLogDirs answer as it comes off the wire (v5): framed,
        with its response header, answering a connection's first request."""
        from kafka.protocol.admin.cluster import DescribeLogDirsResponse as Response

        result = Response.DescribeLogDirsResult
        topic_class = result.DescribeLogDirsTopic
        partition_class = topic_class.DescribeLogDirsPartition
        per_broker: dict[int, dict[str, list]] = {b: {} for b in self._broker_ids}
        for name, placement in self._placement.items():
            for index, replicas in placement:
                for b in replicas:
                    per_broker[b].setdefault(name, []).append(
                        partition_class(
                            partition_index=index,
                            partition_size=1_000_000,
                            offset_lag=0,
                            is_future_key=False,
                        )
                    )
        answers = {}
        for b, topics in per_broker.items():
            response = Response(
                version=LOG_DIRS_VERSION,
                throttle_time_ms=0,
                error_code=0,
                results=[
                    result(
                        error_code=0,
                        log_dir="/var/lib/kafka",
                        total_bytes=-1,
                        usable_bytes=-1,
                        topics=[topic_class(name=n, partitions=ps) for n, ps in topics.items()],
                    )
                ],
            )
            response.with_header(correlation_id=1)
            answers[b] = bytes(response.encode(framed=True, header=True))
        return answers


def kafka_python_fake(answers: dict[int, bytes]) -> SimpleNamespace:
    """kafka-python's KafkaAdminClient for DescribeLogDirs: each broker's answer read
    from its bytes once they have arrived, by kafka-python's own protocol parser (which
    decodes it as the request says: kafka_python_adapter._LogSizesRequest)."""
    from kafka.protocol.parser import KafkaProtocol

    async def send(request, node_id):
        protocol = KafkaProtocol(client_id="bench")  # a connection's first request: id 1
        request.API_VERSION = LOG_DIRS_VERSION
        protocol.send_request(request)
        ((_, answer),) = protocol.receive_bytes(answers[node_id])
        return answer

    def run(coroutine_function, *args):
        # Every answer is there at once: the coroutine never waits (no event loop).
        try:
            coroutine_function(*args).send(None)
        except StopIteration as done:
            return done.value
        raise RuntimeError("the coroutine waited")

    manager = SimpleNamespace(
        cluster=SimpleNamespace(brokers=lambda: [SimpleNamespace(node_id=b) for b in answers]),
        send=send,
        run=run,
    )
    return SimpleNamespace(_manager=manager)


def real_and_fake_compare(*, bootstrap: str, groups: int, repeat: int = 5) -> None:
    """The metadata and ListOffsets steps, real client against the fake, same partitions.

    The real client's figure is this process's CPU (librdkafka's threads included:
    they encode the requests and decode the answers), Kafka's own time left out.
    """
    from apps.metrics.services import sampling

    real = AdminClient({"bootstrap.servers": bootstrap})
    md = real.list_topics(timeout=30)
    count = sum(len(t.partitions) for t in md.topics.values() if t.error is None)
    fake = FakeAdmin(brokers=len(md.brokers), partitions=count, groups=groups, group_partitions=1)
    print(f"{count} partitions on {len(md.brokers)} brokers; CPU s, best of {repeat}", flush=True)
    for label, admin in (("real", real), ("fake", fake)):
        best: dict[str, list[float]] = {"metadata": [], "ListOffsets x2": []}
        for _ in range(repeat):
            cpu = time.process_time()
            partitions, _, _ = sampling.partitions_describe(admin=admin)
            best["metadata"].append(time.process_time() - cpu)
            cpu = time.process_time()
            start, end = sampling.log_offsets_list(admin=admin, partitions=partitions)
            best["ListOffsets x2"].append(time.process_time() - cpu)
            assert len(start) == len(end) == count, (len(start), len(end), count)
        print(f"{label}: " + ", ".join(f"{k} {min(v):.3f}" for k, v in best.items()), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--brokers", type=int, default=3)
    parser.add_argument("--groups", type=int, default=20, help="consumer groups")
    parser.add_argument("--group-partitions", type=int, default=500, help="read by each")
    parser.add_argument(
        "--compare-real",
        metavar="BOOTSTRAP",
        help="instead: time metadata and ListOffsets with the real client on that cluster "
        "and with the fake at the same partition count, to check the fake's cost",
    )
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "balancer_site.settings")
    import django

    django.setup()
    from confluent_kafka import Producer

    from apps.kafka_layer import kafka_python_adapter
    from apps.kafka_layer import records_publish as publishing
    from apps.kafka_layer.connection import ConnectionSettings
    from apps.metrics.services import sampling

    print(
        f"{args.partitions} partitions on {args.brokers} brokers (RF {RF}), "
        f"{args.groups} groups x {args.group_partitions} partitions",
        flush=True,
    )
    print(f"calibration loop: {calibrate():.3f} s", flush=True)
    if args.compare_real:
        real_and_fake_compare(bootstrap=args.compare_real, groups=args.groups)
        return
    admin = FakeAdmin(
        brokers=args.brokers,
        partitions=args.partitions,
        groups=args.groups,
        group_partitions=args.group_partitions,
    )
    log_dirs = admin.log_dirs()

    @contextlib.contextmanager
    def fake_client(**_kwargs):
        yield kafka_python_fake(log_dirs)

    kafka_python_adapter.admin_client_open = fake_client
    steps: dict[str, tuple[float, float]] = {}

    def timed(label: str, fn):
        # Wall time follows the machine's load; this process's CPU time is steadier.
        started, cpu = time.perf_counter(), time.process_time()
        value = fn()
        steps[label] = (time.perf_counter() - started, time.process_time() - cpu)
        print(f"{label}: {steps[label][0]:.3f} s (CPU {steps[label][1]:.3f} s)", flush=True)
        return value

    # As in metrics_sample: no cyclic garbage collection while the round runs.
    with sampling.garbage_collection_paused():
        partitions, _, _ = timed(
            "metadata -> partitions", lambda: sampling.partitions_describe(admin=admin)
        )
        start, end = timed(
            "ListOffsets x2, requests and answers",
            lambda: sampling.log_offsets_list(admin=admin, partitions=partitions),
        )
        sizes = timed(
            "DescribeLogDirs answers -> sizes",
            lambda: kafka_python_adapter.log_sizes_describe(bootstrap_servers="fake:9092"),
        )
        committed = timed(
            "consumer group offsets", lambda: sampling.committed_offsets_list(admin=admin)
        )
        records = timed(
            "records built",
            lambda: sampling.metric_records_build(
                ts_ms=int(time.time() * 1000),
                partitions=partitions,
                start_offsets=start,
                end_offsets=end,
                sizes=sizes,
                committed=committed,
            ),
        )

        # Nothing listens there: the producer only queues, as it does before delivery;
        # its flush (waiting for Kafka) drops the queue instead.
        class Queued(Producer):
            def flush(self, *args, **kwargs) -> int:
                self.purge()
                return 0

        publishing.Producer = Queued
        timed(
            "records queued to the producer",
            lambda: publishing.records_publish(
                connection=ConnectionSettings(bootstrap_servers="127.0.0.1:9"),
                topic="metrics",
                records=records,
            ),
        )
    wall, cpu = (sum(step[i] for step in steps.values()) for i in (0, 1))
    print(
        f"sample round, in process (Kafka's answers excluded): {wall:.2f} s (CPU {cpu:.2f} s)",
        flush=True,
    )


if __name__ == "__main__":
    main()
