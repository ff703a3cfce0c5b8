"""Benchmark: a plan of --gb gigabytes executed on the dev cluster under client traffic,
at fixed throttles and at `auto` (issue 28 items 3 and 5).

On the dev cluster (KAFKA_DEV_* as everywhere; started if not running, left as found),
with a throwaway SQLite database: a topic of --partitions partitions on brokers 1 and
2 filled with --gb gigabytes, demo traffic (--traffic MB/s, acks=all, to a topic on
every broker), and the canary running every CANARY_INTERVAL seconds (1 here) in a
thread, as the clusters worker runs it. Each run is a plan that moves the replica on
broker 1 of every partition to broker 3 (or back): every byte goes to one broker, so
the busiest broker's budget is the whole plan.

Prints per run: wall time of the copy (execution start to the last move done), bytes
copied, efficiency = bytes ÷ (wall × throttle), the canary's produce p99 before /
during / after (median and worst over every broker's rounds), the share of canary
rounds during the run that kept the objective, and for `auto` the throttle trace.
And the calibration loop timed in the same run.

    .venv/bin/python bench/bench_execution.py [--gb 1] [--throttles 10,50,200,auto]
        [--ceiling 200] [--traffic 2] [--partitions 8]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "scripts")]
MB = 1_000_000


def calibrate() -> float:
    started = time.perf_counter()
    sum(i * i for i in range(5_000_000))
    return time.perf_counter() - started


def django_ready(tmp: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "balancer_site.settings")
    os.environ["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
    os.environ["CANARY_INTERVAL"] = os.environ.get("CANARY_INTERVAL", "1")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


class Traffic(threading.Thread):
    """Demo clients: acks=all writes at `rate` bytes/s to a topic on every broker."""

    def __init__(self, bootstrap: str, topic: str, rate: float) -> None:
        super().__init__(daemon=True)
        self.bootstrap, self.topic, self.rate = bootstrap, topic, rate
        self.stopped = threading.Event()
        self.sent = 0

    def run(self) -> None:
        from confluent_kafka import Producer

        from apps.kafka_layer.clients import client_config_build

        producer = Producer(
            client_config_build(
                bootstrap_servers=self.bootstrap, extra={"acks": "all", "linger.ms": 5}
            )
        )
        payload = b"t" * 1000
        started = time.monotonic()
        while not self.stopped.is_set():
            due = (time.monotonic() - started) * self.rate
            while self.sent < due:
                try:
                    producer.produce(self.topic, payload)
                    self.sent += len(payload)
                except BufferError:
                    break
            producer.poll(0.01)
        producer.flush(10)


class Canary(threading.Thread):
    """The canary's rounds, every CANARY_INTERVAL, as the clusters worker runs them."""

    def __init__(self, cluster_id: int) -> None:
        super().__init__(daemon=True)
        self.cluster_id = cluster_id
        self.stopped = threading.Event()

    def run(self) -> None:
        from django.conf import settings
        from django.db import connection

        from apps.canary.services import canary_round
        from apps.clusters.models import Cluster

        cluster = Cluster.objects.get(pk=self.cluster_id)
        while not self.stopped.is_set():
            started = time.monotonic()
            canary_round(cluster=cluster)
            self.stopped.wait(max(0.0, settings.CANARY_INTERVAL - (time.monotonic() - started)))
        connection.close()


def p99s(cluster, since, until) -> list[float]:
    from apps.canary.models import CanaryWindow

    rows = CanaryWindow.objects.filter(cluster=cluster, at__gte=since, at__lt=until)
    return [w.produce_p99_ms if w.acked == w.sent else float("inf") for w in rows if w.sent]


def p99_text(values: list[float]) -> str:
    finite = [v for v in values if v != float("inf")]
    if not finite:
        return "no rounds"
    lost = len(values) - len(finite)
    return (
        f"median {statistics.median(finite):.0f} ms, worst {max(finite):.0f} ms"
        + (f", {lost} round(s) with failed writes" if lost else "")
        + f" ({len(values)} broker-rounds)"
    )


def run_one(*, cluster, user, admin, topic: str, throttle: str, ceiling: int) -> dict:
    from devkit import live
    from django.utils import timezone

    from apps.audit.models import AuditEvent
    from apps.canary.band_updates import BrokerJudgement
    from apps.canary.models import CanaryWindow
    from apps.clusters.services import cluster_sync
    from apps.plans.executor import execution_run
    from apps.plans.models import PlanMode, PlanOrigin
    from apps.plans.services import plan_approve, policy_get, policy_update
    from apps.plans.services.creation import plan_create

    assert cluster_sync(cluster=cluster), cluster.last_sync_error
    auto = throttle == "auto"
    rate = ceiling if auto else int(float(throttle) * MB)
    policy_update(
        policy=policy_get(cluster=cluster),
        actor=user,
        changes={"throttle_auto": auto, "throttle_bytes_per_sec": rate},
    )
    before = {key: list(where[0]) for key, where in live.placement(admin, [topic]).items()}
    swap = {1: 3, 3: 1}
    after = {k: [swap.get(b, b) for b in r] for k, r in before.items()}
    plan = plan_create(
        cluster=cluster,
        origin=PlanOrigin.OPERATOR,
        mode=PlanMode.FULL,
        reassignment={
            "version": 1,
            "partitions": [
                {"topic": t, "partition": p, "replicas": r} for (t, p), r in after.items()
            ],
        },
        assignment_before=before,
        report={},
        actor=user,
    )
    # canary rounds before the run (the "before" figure) and after it: a bench measures
    # over a span of time, nothing here waits for a condition
    time.sleep(10)
    plan_approve(plan=plan, user=user)
    plan = execution_run(plan=plan, poll_interval=0.25, max_seconds=3600)
    assert plan.state == "completed", (plan.state, plan.error)
    done = max(m.finished_at for m in plan.moves.all() if m.finished_at)
    copied = sum((m.bytes_copied or m.bytes) for m in plan.moves.all())
    time.sleep(10)
    wall = (done - plan.started_at).total_seconds()
    windows = CanaryWindow.objects.filter(cluster=cluster, at__gte=plan.started_at, at__lt=done)
    bands = {}
    for b in cluster.canary_bands.all():
        bands[b.broker_id] = b.top_ms
    kept = sum(
        BrokerJudgement(
            broker_id=w.broker_id,
            sent=w.sent,
            acked=w.acked,
            p99_ms=w.produce_p99_ms,
            top_ms=bands.get(w.broker_id, 50.0),
        ).within
        for w in windows
    )
    trace = [
        (e.created_at, e.after.get("throttle_rate"), e.reason)
        for e in AuditEvent.objects.filter(
            action="execution.throttle_adapted", object_id=str(plan.pk)
        ).order_by("id")
    ]
    return {
        "throttle": throttle,
        "rate": rate,
        "wall": wall,
        "bytes": copied,
        "efficiency": None if auto else copied / (wall * rate),
        "before": p99s(cluster, plan.started_at - timezone.timedelta(seconds=10), plan.started_at),
        "during": p99s(cluster, plan.started_at, done),
        "after": p99s(cluster, done, done + timezone.timedelta(seconds=10)),
        "kept": (kept, windows.count()),
        "trace": [
            (round((at - plan.started_at).total_seconds(), 1), r, why) for at, r, why in trace
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0)
    parser.add_argument("--throttles", default="10,50,200,auto")
    parser.add_argument("--ceiling", type=float, default=200.0, help="MB/s, for auto")
    parser.add_argument("--traffic", type=float, default=2.0, help="MB/s of demo writes")
    parser.add_argument("--partitions", type=int, default=8)
    args = parser.parse_args()
    calibration_before = calibrate()
    tmp = tempfile.mkdtemp(prefix="bench-exec-")
    django_ready(tmp)

    from dev_cluster import DevCluster
    from devkit import live
    from devkit.users import user_make

    from apps.canary.probes import canary_probe_drop
    from apps.clusters.services import cluster_register, cluster_sync
    from apps.kafka_layer.clients import admin_client_create

    cluster_dev = DevCluster()
    with cluster_dev.use(kafka=True, redis=True):  # the sync pushes to Channels
        bootstrap = cluster_dev.bootstrap_servers
        admin = admin_client_create(bootstrap_servers=bootstrap)
        topic = live.topic_name("bench-exec")
        traffic_topic = live.topic_name("bench-traffic")
        live.topic_create(admin, topic, assignment=[[1, 2]] * args.partitions)
        live.topic_create(admin, traffic_topic, assignment=[[1, 2, 3], [2, 3, 1], [3, 1, 2]] * 2)
        try:
            t0 = time.monotonic()
            live.fill(bootstrap, topic, args.partitions, int(args.gb * 1e9 / args.partitions))
            print(f"filled {args.gb} GB in {time.monotonic() - t0:.0f} s", flush=True)
            user = user_make("bench", "admin")
            cluster = cluster_register(name="bench-exec", bootstrap_servers=bootstrap)
            assert cluster_sync(cluster=cluster), cluster.last_sync_error
            from apps.plans.services import policy_get, policy_update

            policy_update(
                policy=policy_get(cluster=cluster),
                actor=user,
                changes={"topics_include": [topic], "four_eyes": False},
            )
            traffic = Traffic(bootstrap, traffic_topic, args.traffic * MB)
            canary = Canary(cluster.pk)
            traffic.start()
            canary.start()
            results = []
            for throttle in args.throttles.split(","):
                result = run_one(
                    cluster=cluster,
                    user=user,
                    admin=admin,
                    topic=topic,
                    throttle=throttle.strip(),
                    ceiling=int(args.ceiling * MB),
                )
                results.append(result)
                report(result)
            canary.stopped.set()
            traffic.stopped.set()
            canary.join(30)
            traffic.join(30)
            canary_probe_drop(cluster=cluster)
        finally:
            live.topics_delete(admin, [topic, traffic_topic])
    calibration_after = calibrate()
    print(
        f"calibration loop: {calibration_before:.2f} s before, {calibration_after:.2f} s after; "
        f"load average {os.getloadavg()[0]:.2f}"
    )


def report(r: dict) -> None:
    name = "auto" if r["throttle"] == "auto" else f"{r['rate'] / MB:.0f} MB/s"
    eff = "" if r["efficiency"] is None else f", efficiency {r['efficiency']:.1%}"
    kept, rounds = r["kept"]
    print(f"\n== throttle {name}: {r['bytes'] / 1e9:.2f} GB in {r['wall']:.1f} s{eff}")
    print(f"   canary p99 before: {p99_text(r['before'])}")
    print(f"   canary p99 during: {p99_text(r['during'])}")
    print(f"   canary p99 after:  {p99_text(r['after'])}")
    print(f"   objective kept in {kept} of {rounds} broker-rounds during the copy")
    for at, rate, why in r["trace"]:
        print(f"   +{at:6.1f} s  {(rate or 0) / MB:7.1f} MB/s  {why}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
