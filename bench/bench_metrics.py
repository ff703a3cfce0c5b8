"""Benchmark: aggregate one minute of samples of N partitions on Spark local[2].

Produces 600,000 synthetic metric records (100,000 partitions x 6 samples, 10 s apart,
in one 60 s window, plus one record of the next round that closes the window) to a
fresh topic on the dev cluster, then times the aggregation job end to end from that
topic: Kafka read, parse, windowing, partition and broker loads, results collected
to the driver, and (with --store) written to a scratch SQLite database through the
same service the Celery task uses. Prints elapsed times and peak memory (driver
Python RSS and Spark JVM RSS).

    scripts/dev-cluster up
    .venv/bin/python bench/bench_metrics.py [--partitions 100000] [--master local[2]] [--store]
    # fill once, measure many times (433k partitions take minutes to produce):
    .venv/bin/python bench/bench_metrics.py --partitions 433000 --keep-topic
    .venv/bin/python bench/bench_metrics.py --topic bench-metrics-433000-<window start ms>

With --incremental each run is a pair, as in the warm worker with samples kept
(spark_jobs.sample_cache): a first run reads the rounds before the last one (no
window closes), then the timed run reads only the last round from Kafka and takes
the five earlier rounds from the session, composing the window that closed.

A calibration loop (the one of bench_control_plane.py) runs at the start and the end,
so figures taken on a busy machine can be compared.

Target: <= 60 s for 433,000 partitions (2.6M rows) on local[2].
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SAMPLES = 6
SAMPLE_MS = 10_000
WINDOW_MS = 60_000
BROKERS = 6
GROUP = "bench-readers"


def records_generate(*, partitions: int, window_start_ms: int, seed: int = 7):
    """Yield (key, value) in round order; rates are known per partition (for the check)."""
    from spark_jobs.metrics_schema import metric_key_encode, metric_record_encode

    rng = random.Random(seed)
    parts = []
    for i in range(partitions):
        topic, index = f"bench-topic-{i // 100:04d}", i % 100
        replicas = rng.sample(range(1, BROKERS + 1), 3)
        rate = rng.randint(0, 2_000)  # messages per 10 s
        record_bytes = rng.choice((100, 500, 1_000))
        parts.append((topic, index, replicas, rate, record_bytes, i % 2 == 0))
    for k in range(SAMPLES + 1):
        ts = window_start_ms + k * SAMPLE_MS
        for n, (topic, index, replicas, rate, record_bytes, consumed) in enumerate(parts):
            if k == SAMPLES and n > 0:
                break  # one record of the next round is enough to close the window
            end = 1_000_000 + rate * k
            size = end * record_bytes
            yield (
                metric_key_encode(topic=topic, partition=index),
                metric_record_encode(
                    ts_ms=ts,
                    topic=topic,
                    partition=index,
                    leader=replicas[0],
                    replicas=replicas,
                    start_offset=0,
                    end_offset=end,
                    sizes={b: size for b in replicas},
                    committed={GROUP: end - 10} if consumed else {},
                ),
            )


def topic_fill(*, bootstrap: str, topic: str, partitions: int, window_start_ms: int) -> int:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=6, replication_factor=1)])[topic].result(30)
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 50,
            "compression.type": "lz4",
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    n = 0
    for key, value in records_generate(partitions=partitions, window_start_ms=window_start_ms):
        while True:
            try:
                producer.produce(topic, key=key, value=value)
                break
            except BufferError:
                producer.poll(0.05)
        n += 1
    if producer.flush(120):
        raise RuntimeError("records left unsent")
    return n


def calibrate() -> float:
    """A fixed amount of dict/list work (as bench_control_plane.py); seconds taken."""
    start = time.perf_counter()
    total = 0
    for i in range(300_000):
        d = {"a": i, "b": [i, i + 1, i + 2]}
        total += len(d["b"]) + (d["a"] & 7)
    assert total
    return time.perf_counter() - start


def jvm_cpu_seconds(spark) -> float:
    """User + system CPU time of the Spark JVM so far (local mode: driver and executors)."""
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def jvm_peak_rss_mb(spark) -> float | None:
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def last_round_offsets(spark, *, bootstrap: str, topic: str, ts_ms: int):
    """Per metrics-topic partition: (first offset of the round at `ts_ms`, end). Untimed."""
    from pyspark.sql import functions as F

    from spark_jobs.partition_loads import metrics_extract, records_parse

    samples = records_parse(
        metrics_extract(spark, bootstrap_servers=bootstrap, topic=topic), window_ms=SAMPLE_MS
    )
    rows = samples.groupBy("kafka_partition").agg(
        F.min(F.when(F.col("ts") >= ts_ms, F.col("kafka_offset"))).alias("lo"),
        (F.max("kafka_offset") + 1).alias("end"),
    )
    return {r["kafka_partition"]: (r["lo"], r["end"]) for r in rows.collect()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:29091,127.0.0.1:29092,127.0.0.1:29093")
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="2g")
    parser.add_argument(
        "--slide",
        type=int,
        default=10,
        help="window slide in seconds (60: tumbling); a run composes the one window "
        "that closed, as a steady-state run does every slide",
    )
    parser.add_argument("--store", action="store_true", help="also write to a scratch SQLite DB")
    parser.add_argument(
        "--topic",
        help="reuse a topic a --keep-topic run filled (bench-metrics-<partitions>-<window ms>)",
    )
    parser.add_argument("--keep-topic", action="store_true", help="do not delete the topic")
    parser.add_argument("--java-options", default="", help="spark.driver.extraJavaOptions")
    parser.add_argument("--conf", action="append", default=[], help="extra Spark conf k=v")
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="aggregate the same records N times in one session (run 1 is a cold JVM, as "
        "under spark-submit; later runs show the warm figure)",
    )
    parser.add_argument(
        "--incremental",
        action="store_true",
        help="keep the first five rounds in the session and time the run that reads only "
        "the sixth (the steady state with METRICS_SAMPLES_KEPT_IN_SESSION)",
    )
    args = parser.parse_args()

    from spark_jobs.partition_loads import aggregation_execute, metrics_extract
    from spark_jobs.sample_cache import SampleCache
    from spark_jobs.session import spark_session_build

    calibration = [calibrate()]
    print(f"calibration loop: {calibration[0]:.3f} s")
    if args.topic:
        topic, keep = args.topic, True
        args.partitions, window_start = (int(x) for x in topic.rsplit("-", 2)[1:])
        rows = args.partitions * SAMPLES + 1
        print(f"reusing {topic}: {args.partitions:,} partitions, {rows:,} records")
    else:
        keep = args.keep_topic
        window_start = (int(time.time() * 1000) // WINDOW_MS - 5) * WINDOW_MS
        topic = f"bench-metrics-{uuid.uuid4().hex[:6]}-{args.partitions}-{window_start}"
        t = time.monotonic()
        rows = topic_fill(
            bootstrap=args.bootstrap,
            topic=topic,
            partitions=args.partitions,
            window_start_ms=window_start,
        )
        print(f"produced {rows:,} records to {topic} in {time.monotonic() - t:.1f} s")

    t = time.monotonic()
    spark = spark_session_build(
        master=args.master,
        app_name="bench-metrics",
        extra_conf={
            "spark.driver.memory": args.driver_memory,
            **({"spark.driver.extraJavaOptions": args.java_options} if args.java_options else {}),
            **dict(kv.split("=", 1) for kv in args.conf),
        },
    )
    print(f"window {WINDOW_MS // 1000} s sliding by {args.slide} s")
    print(f"SparkSession ({args.master}) started in {time.monotonic() - t:.1f} s")
    try:
        timings = []
        if args.incremental:
            last_round = last_round_offsets(
                spark,
                bootstrap=args.bootstrap,
                topic=topic,
                ts_ms=window_start + (SAMPLES - 1) * SAMPLE_MS,
            )

            def extract(start, end):
                return metrics_extract(
                    spark,
                    bootstrap_servers=args.bootstrap,
                    topic=topic,
                    starting_offsets=start,
                    ending_offsets=end,
                )

            topic_end = {p: o for p, (_, o) in last_round.items()}
        for _ in range(args.runs):
            if args.incremental:
                cache = SampleCache.create(spark, slide_ms=args.slide * 1000)
                begin = {p: lo for p, (lo, _) in last_round.items()}
                first = aggregation_execute(
                    spark,
                    samples=cache.samples(
                        spark, start={p: 0 for p in begin}, end=begin, extract=extract
                    ),
                    window_ms=WINDOW_MS,
                    slide_ms=args.slide * 1000,
                    previous_finalized_ms=None,
                )
                cache.commit(next_start=first.next_offsets)
            t, jvm0, py0 = time.monotonic(), jvm_cpu_seconds(spark), own_cpu_seconds()
            if args.incremental:
                result = aggregation_execute(
                    spark,
                    samples=cache.samples(
                        spark, start=first.next_offsets, end=topic_end, extract=extract
                    ),
                    window_ms=WINDOW_MS,
                    slide_ms=args.slide * 1000,
                    # As in the steady state: the run before stored the window
                    # the first record of the last round closed, so this one
                    # composes the one window its records close.
                    previous_finalized_ms=window_start + WINDOW_MS - args.slide * 1000,
                )
                read = sum(topic_end[p] - begin[p] for p in begin)
                cache.drop()
            else:
                raw = metrics_extract(spark, bootstrap_servers=args.bootstrap, topic=topic)
                result = aggregation_execute(
                    spark,
                    raw=raw,
                    window_ms=WINDOW_MS,
                    slide_ms=args.slide * 1000,
                    previous_finalized_ms=None,
                )
            timings.append(
                (
                    time.monotonic() - t,
                    jvm_cpu_seconds(spark) - jvm0,
                    own_cpu_seconds() - py0,
                )
            )
            # Printed at once: on a busy machine a long run may be cut short.
            print(f"  run {len(timings)}: {timings[-1][0]:.1f} s wall", flush=True)
        if args.incremental:
            print(
                f"incremental: each timed run read {read:,} records from Kafka, "
                f"{rows - read:,} from the session"
            )
        jvm_mb = jvm_peak_rss_mb(spark)
    finally:
        spark.stop()
        from confluent_kafka.admin import AdminClient

        if not keep:
            admin = AdminClient({"bootstrap.servers": args.bootstrap})
            admin.delete_topics([topic])[topic].result(30)

    assert result.input_rows == rows, result.input_rows  # kept + read
    assert result.malformed_rows == 0
    assert len(result.partition_loads) == args.partitions, len(result.partition_loads)
    assert len(result.broker_loads) == BROKERS
    # Spot check against the generator's known rates (same seed: same first partition).
    gen = records_generate(partitions=1, window_start_ms=window_start)
    s0, s1 = (json.loads(next(gen)[1]) for _ in range(2))
    got = {(r["topic"], r["partition"]): r for r in result.partition_loads}[
        (s0["topic"], s0["partition"])
    ]
    assert abs(got["messages_in"] - (s1["end_offset"] - s0["end_offset"]) / 10) < 1e-6, got
    size0, size1 = (s["sizes"][str(s["leader"])] for s in (s0, s1))
    assert abs(got["bytes_in"] - (size1 - size0) / 10) < 1e-6, got
    print(
        f"aggregated {rows:,} rows -> {len(result.partition_loads):,} partition loads, "
        f"{len(result.broker_loads)} broker loads (Kafka read to results on the driver):"
    )
    for n, (wall, jvm_cpu, py_cpu) in enumerate(timings, 1):
        print(
            f"  run {n} ({'cold JVM' if n == 1 else 'warm'}): {wall:.1f} s wall, CPU "
            f"{jvm_cpu:.1f} s JVM + {py_cpu:.1f} s Python "
            f"(= {(jvm_cpu + py_cpu) / 2:.1f} s on 2 otherwise idle cores)"
        )
    print("load average at the end (1/5/15 min): {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    calibration.append(calibrate())
    print(
        f"calibration loop: {calibration[0]:.3f} s at the start, {calibration[1]:.3f} s at the end"
    )
    if keep:
        print(f"kept {topic}: --topic {topic} measures again without producing")

    if args.store:
        scratch = Path(tempfile.mkdtemp()) / "bench.sqlite3"
        os.environ["DATABASE_URL"] = f"sqlite:///{scratch}"
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "balancer_site.settings")
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        from apps.clusters.models import Cluster
        from apps.metrics.services.runs import aggregation_run_start
        from apps.metrics.services.storage import aggregation_results_store

        cluster = Cluster.objects.create(name="bench", bootstrap_servers=args.bootstrap)
        run = aggregation_run_start(cluster=cluster)
        t = time.monotonic()
        aggregation_results_store(cluster=cluster, run=run, topic=topic, result=result)
        print(
            f"stored {run.output_rows:,} partition loads in SQLite in {time.monotonic() - t:.1f} s"
        )

    py_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"peak memory: driver Python {py_mb:.0f} MB, Spark JVM "
        + (f"{jvm_mb:.0f} MB" if jvm_mb is not None else "unknown")
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
