"""Benchmark: the product's real metrics sample round on a real cluster, at several sizes.

Runs `metrics_sample_round` (what the Celery task calls: backoff check, round lease,
metrics_sample) against a Kafka cluster, after creating topics of 25 partitions (RF 2
by default; the issue's shape, 8,000 topics at 200k) until the cluster holds each size
asked for. Per round it prints the wall time, this process's CPU time
(time.process_time counts every thread: librdkafka's C threads encoding requests and
parsing answers, kafka-python's IO thread decoding DescribeLogDirs, the producer
compressing) and, as a split, the wall time spent blocked on Kafka (futures' results,
list_topics, kafka-python's requests, the producer's flush) against the main thread's
own CPU. The brokers run in other processes, so the round's process CPU is everything
but Kafka's answer time. Then it fits the CPU per partition (DescribeLogDirs per
replica) and extrapolates to `--target` partitions at `--target-rf`.

    scripts/dev-cluster up --partitions-hint 30000
    .venv/bin/python bench/bench_sample_round_live.py \\
        --bootstrap "$(scripts/dev-cluster bootstrap-servers)" --sizes 5000,10000,20000,40000

The topics it creates (`bench-sample-*`) are deleted at the end unless --keep.
A calibration loop (bench_control_plane.py's) is timed in the same run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_control_plane import calibrate, database  # noqa: E402

PREFIX = "bench-sample-"
# Per size: (partitions, replicas, best round CPU, best CPU of each step).
Measured = list[tuple[int, int, float, dict[str, float]]]


class Clock:
    """Wall time blocked on Kafka, summed from every blocking call the round makes."""

    def __init__(self) -> None:
        self.waiting = 0.0
        self._main = threading.main_thread()

    @contextlib.contextmanager
    def blocked(self) -> Iterator[None]:
        if threading.current_thread() is not self._main:
            yield  # a client's own thread: not the round's waiting
            return
        started = time.perf_counter()
        try:
            yield
        finally:
            self.waiting += time.perf_counter() - started

    def wrap(self, fn: Callable) -> Callable:
        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.blocked():
                return fn(*args, **kwargs)

        return timed


# Runs in its own process (not to take this one's GIL or CPU): every `interval` s it
# looks whether any thread of process `pid` is running or waiting for a core (state
# R), as opposed to sleeping on a socket, a lock or a timer: waiting for Kafka.
_BUSY_WATCHER = r"""
import os, select, sys, time
pid, interval = int(sys.argv[1]), float(sys.argv[2])
tasks = f"/proc/{pid}/task"
active, busy, t0, last = False, 0.0, 0.0, 0.0
while True:
    ready, _, _ = select.select([sys.stdin], [], [], 0 if active else None)
    if ready:
        line = sys.stdin.readline()
        if not line:
            break
        if line.startswith("start"):
            active, busy = True, 0.0
            t0 = last = time.perf_counter()
        else:
            active = False
            print(busy, time.perf_counter() - t0, flush=True)
        continue
    running = False
    for tid in os.listdir(tasks):
        try:
            with open(f"{tasks}/{tid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        if stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3] == b"R":
            running = True
            break
    # The time since the last look goes to what this look saw: looks come less often
    # while the machine is busy, so counting looks would under-count busy time.
    now = time.perf_counter()
    busy += (now - last) if running else 0.0
    last = now
    time.sleep(interval)
"""


class BusyWatch:
    """Wall time during which at least one thread of this process runs (or is ready to
    and waits for a core): the round's own time, its threads' overlap counted once,
    Kafka's answer time (every thread asleep on a socket) left out. Sampled every
    `interval` s from another process; a thread ready but waiting for a core counts as
    busy, so on a machine shared with the brokers it over-counts rather than under."""

    def __init__(self, interval: float = 0.002) -> None:
        import subprocess

        self._proc = subprocess.Popen(
            [sys.executable, "-c", _BUSY_WATCHER, str(os.getpid()), str(interval)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def start(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write("start\n")
        self._proc.stdin.flush()

    def stop(self) -> float:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write("stop\n")
        self._proc.stdin.flush()
        busy, _elapsed = self._proc.stdout.readline().split()
        return float(busy)

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait(10)


def instrument(clock: Clock, steps: dict[str, list[float]]) -> None:
    """Time the round's steps and its blocking calls, without changing what they do."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient

    from apps.kafka_layer import kafka_python_adapter
    from apps.kafka_layer import records_publish as publishing
    from apps.kafka_layer.clients import client_config_build
    from apps.metrics.services import sampling

    Future.result = clock.wrap(Future.result)  # every confluent-kafka admin answer

    class TimedAdmin(AdminClient):
        def list_topics(self, *args: Any, **kwargs: Any) -> Any:
            with clock.blocked():
                return super().list_topics(*args, **kwargs)

    class TimedProducer(Producer):
        def flush(self, *args: Any, **kwargs: Any) -> Any:
            with clock.blocked():
                return super().flush(*args, **kwargs)

        def poll(self, *args: Any, **kwargs: Any) -> Any:
            with clock.blocked():
                return super().poll(*args, **kwargs)

    def admin_create(
        *, connection: Any = None, bootstrap_servers: str | None = None, extra: Any = None
    ) -> AdminClient:
        # kafka_layer.clients.admin_client_create's config, in a class whose list_topics is timed.
        config = client_config_build(
            connection=connection, bootstrap_servers=bootstrap_servers, extra=extra
        )
        return TimedAdmin(config)

    sampling.admin_client_create = admin_create
    publishing.Producer = TimedProducer

    opened = kafka_python_adapter.admin_client_open

    @contextlib.contextmanager
    def admin_open(**kwargs: Any) -> Iterator[Any]:
        with clock.blocked():  # connecting to the bootstrap broker and reading metadata
            context = opened(**kwargs)
            client = context.__enter__()
        try:
            client._manager.run = clock.wrap(client._manager.run)
            yield client
        finally:
            context.__exit__(None, None, None)

    kafka_python_adapter.admin_client_open = admin_open

    def step(name: str) -> None:
        fn = getattr(sampling, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            cpu = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                steps.setdefault(name, []).append(time.process_time() - cpu)

        setattr(sampling, name, timed)

    for name in (
        "partitions_describe",
        "metrics_topic_ensure",
        "log_offsets_list",
        "replica_sizes_read",
        "committed_offsets_list",
        "metric_records_build",
        "records_publish",
    ):
        step(name)


def topics_grow(
    *, bootstrap: str, partitions: int, per_topic: int, rf: int, timeout: float = 600
) -> None:
    """Create bench topics of `per_topic` partitions until they hold at least `partitions`,
    all with a leader."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    existing = set(admin.list_topics(timeout=60).topics)
    wanted = [f"{PREFIX}{i:05d}" for i in range(-(-partitions // per_topic))]
    missing = [NewTopic(t, per_topic, rf) for t in wanted if t not in existing]
    # A request may create at most 10,000 KRaft records (one per partition and topic).
    batch = max(1, 2_500 // per_topic)
    for i in range(0, len(missing), batch):
        for future in admin.create_topics(missing[i : i + batch], request_timeout=120).values():
            future.result(180)
    deadline = time.monotonic() + timeout
    while True:
        md = admin.list_topics(timeout=60)
        led = sum(
            1
            for name in wanted
            if name in md.topics
            for p in md.topics[name].partitions.values()
            if p.leader >= 0
        )
        if led == len(wanted) * per_topic:
            return
        if time.monotonic() > deadline:
            sys.exit(f"bench: only {led} of {len(wanted) * per_topic} partitions have a leader")
        time.sleep(1)


def topics_delete(*, bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    names = [t for t in admin.list_topics(timeout=60).topics if t.startswith(PREFIX)]
    for future in (admin.delete_topics(names, request_timeout=120) if names else {}).values():
        with contextlib.suppress(Exception):
            future.result(180)
    print(f"deleted {len(names)} bench topics", flush=True)


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """(intercept, slope) of the least-squares line."""
    if len(xs) < 2:
        return 0.0, ys[0] / xs[0]
    slope, intercept = statistics.linear_regression(xs, ys)
    return intercept, slope


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--sizes", default="5000,10000,20000", help="bench partitions, ascending")
    parser.add_argument("--rf", type=int, default=2, help="replication factor of bench topics")
    parser.add_argument(
        "--topic-partitions",
        type=int,
        default=25,
        help="partitions per bench topic (25: the issue's 8,000 topics at 200k partitions)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds per size")
    parser.add_argument("--target", type=int, default=200_000, help="partitions to extrapolate to")
    parser.add_argument("--target-rf", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the bench topics")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "balancer_site.settings")
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
    with database("sqlite"):
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        run(args, sizes)


def run(args: argparse.Namespace, sizes: list[int]) -> None:
    from apps.clusters.models import Cluster
    from apps.metrics.services import metrics_sample_round

    clock = Clock()
    steps: dict[str, list[float]] = {}
    instrument(clock, steps)
    cluster = Cluster.objects.create(name="bench", bootstrap_servers=args.bootstrap)
    print(f"load average {os.getloadavg()[0]:.2f}", flush=True)
    print(f"calibration loop: {calibrate():.3f} s (0.057 s quiet)", flush=True)
    measured: Measured = []
    busy_measured: list[tuple[int, float]] = []
    watch = BusyWatch()
    try:
        for size in sizes:
            started = time.perf_counter()
            topics_grow(
                bootstrap=args.bootstrap,
                partitions=size,
                per_topic=args.topic_partitions,
                rf=args.rf,
            )
            print(f"\n{size} bench partitions ready in {time.perf_counter() - started:.0f} s")
            cpus: list[float] = []
            busies: list[float] = []
            per_step: dict[str, float] = {}
            n, warm_until = 0, time.monotonic() + 600
            while n <= args.rounds:
                steps.clear()
                clock.waiting = 0.0
                watch.start()
                wall, cpu, main = time.perf_counter(), time.process_time(), time.thread_time()
                result = metrics_sample_round(cluster=cluster)
                wall = time.perf_counter() - wall
                busy = watch.stop()
                cpu = time.process_time() - cpu
                main = time.thread_time() - main
                if result is None:
                    sys.exit("bench: the round did not run (backoff or lease); see the log")
                # Warm-up rounds until every partition answers: a new log may not be
                # served yet by its leader although metadata names one.
                complete = result.records == result.partitions
                label = "warm-up" if n == 0 else f"round {n}"
                n += 1 if complete or n or time.monotonic() > warm_until else 0
                print(
                    f"{label}: {result.partitions} partitions, {result.records} records, "
                    f"sizes {'known' if result.sizes_known else 'UNKNOWN'}: wall {wall:.2f} s, "
                    f"process CPU {cpu:.3f} s (main thread {main:.3f}, other threads "
                    f"{cpu - main:.3f}), waiting on Kafka {clock.waiting:.2f} s, "
                    f"not waiting {wall - clock.waiting:.2f} s, busy {busy:.2f} s",
                    flush=True,
                )
                print(
                    "  CPU by step: " + ", ".join(f"{k} {sum(v):.3f}" for k, v in steps.items()),
                    flush=True,
                )
                if label != "warm-up":
                    cpus.append(cpu)
                    busies.append(busy)
                    for k, v in steps.items():
                        per_step[k] = min(per_step.get(k, float("inf")), sum(v))
            replicas = sum(len(p) for p in _replicas(args.bootstrap))
            measured.append((result.partitions, replicas, min(cpus), per_step))
            busy_measured.append((result.partitions, min(busies)))
            print(
                f"{result.partitions} partitions ({replicas} replicas): best round CPU "
                f"{min(cpus):.3f} s, median {statistics.median(cpus):.3f} s; busy best "
                f"{min(busies):.2f} s, median {statistics.median(busies):.2f} s",
                flush=True,
            )
    finally:
        watch.close()
        print(f"\nload average {os.getloadavg()[0]:.2f}", flush=True)
        print(f"calibration loop: {calibrate():.3f} s", flush=True)
        if not args.keep:
            topics_delete(bootstrap=args.bootstrap)
    report(args, measured)
    if busy_measured:
        intercept, slope = fit([m[0] for m in busy_measured], [m[1] for m in busy_measured])
        print(
            f"round busy time (some thread of this process running), fitted as a whole: "
            f"{slope * 1e6:.2f} us per partition + {intercept:.3f} s -> "
            f"{intercept + slope * args.target:.2f} s at {args.target} (RF {args.rf})",
            flush=True,
        )


def _replicas(bootstrap: str) -> list[list[int]]:
    from confluent_kafka.admin import AdminClient

    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=60)
    return [p.replicas for t in md.topics.values() for p in t.partitions.values()]


def report(
    args: argparse.Namespace, measured: list[tuple[int, int, float, dict[str, float]]]
) -> None:
    """Fit each step's best CPU: DescribeLogDirs per replica, the rest per partition."""
    if not measured:
        return
    target_replicas = args.target * args.target_rf
    parts = [m[0] for m in measured]
    reps = [m[1] for m in measured]
    total = 0.0
    print(
        f"\nper-step fit (best CPU of each size) -> {args.target} partitions, RF {args.target_rf}"
    )
    for name in measured[-1][3]:
        ys = [m[3].get(name, 0.0) for m in measured]
        by_replica = name == "replica_sizes_read"
        xs, at = (reps, target_replicas) if by_replica else (parts, args.target)
        intercept, slope = fit(xs, ys)
        estimate = intercept + slope * at
        total += estimate
        unit = "replica" if by_replica else "partition"
        print(
            f"  {name}: {slope * 1e6:.2f} us per {unit} + {intercept:.3f} s -> {estimate:.2f} s",
            flush=True,
        )
    # The rest of the round (admin client, lease, backoff check): per partition too.
    rest = [m[2] - sum(m[3].values()) for m in measured]
    intercept, slope = fit(parts, rest)
    total += intercept + slope * args.target
    print(f"  rest of the round: {slope * 1e6:.2f} us per partition + {intercept:.3f} s")
    intercept, slope = fit(parts, [m[2] for m in measured])
    print(
        f"round CPU, fitted as a whole: {slope * 1e6:.2f} us per partition + {intercept:.3f} s "
        f"-> {intercept + slope * args.target:.2f} s at {args.target} (RF {args.rf}); "
        f"sum of the steps at RF {args.target_rf}: {total:.2f} s "
        f"({'<=' if total <= 5 else '>'} 5 s)",
        flush=True,
    )


if __name__ == "__main__":
    main()
