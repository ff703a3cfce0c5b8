"""Benchmark: a plan's estimate against what its execution copied and took, at three
throttles (issue 23: bytes within ±10 %, copy time within ±25 %).

On the dev cluster: a 6-partition topic of RF 2 on brokers 1 and 2, filled, and fed
while the plans run (~`--write-rate` bytes/s, measured by the real metrics pipeline:
two sample rounds and a Spark aggregation, so the estimate forecasts the writes the
copy takes along). For each throttle an add-brokers plan onto broker 3 is proposed,
approved at that throttle and run to completion, then its rollback the same way: the
estimate as the executor made it at the start (bytes to move, copy time) beside the
bytes copied and the time taken. Scratch SQLite database, Spark local[2].

    scripts/dev-cluster up
    .venv/bin/python bench/bench_estimate.py [--bootstrap ...] [--write-rate 150000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

# (label, throttle bytes/s or 0 for none, MiB per partition)
CASES = [("1 MB/s", 1_000_000, 6), ("50 MB/s", 50_000_000, 96), ("unthrottled", 0, 96)]


def calibration() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "sum(i*i for i in range(5_000_000))"], check=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:29091,127.0.0.1:29092,127.0.0.1:29093")
    parser.add_argument("--write-rate", type=float, default=150_000, help="bytes/s into the topic")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp()) / "estimate.sqlite3"
    os.environ["DATABASE_URL"] = f"sqlite:///{scratch}"
    os.environ["METRICS_TOPIC"] = f"__estimate_metrics_{uuid.uuid4().hex[:6]}"
    os.environ["EXECUTOR_POLL_INTERVAL"] = "1"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "balancer_site.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)

    from devkit import live
    from devkit.producer import AckedProducer
    from django.contrib.auth import get_user_model

    from apps.clusters.services import cluster_sync
    from apps.kafka_layer.clients import admin_client_create
    from apps.metrics.services import metrics_sample
    from apps.metrics.services.aggregation import aggregation_run
    from apps.plans.executor import execution_run
    from apps.plans.models import PlanState
    from apps.plans.selectors import plan_estimate_check
    from apps.plans.services import plan_approve, plan_request, plan_rollback_request
    from spark_jobs.session import spark_session_build

    user = get_user_model().objects.create_superuser("bench", "", "bench-pass-1")
    admin = admin_client_create(bootstrap_servers=args.bootstrap)
    spark = spark_session_build(
        master="local[2]",
        app_name="bench-estimate",
        extra_conf={"spark.sql.shuffle.partitions": "2", "spark.driver.memory": "1g"},
    )
    print(f"calibration loop {calibration():.3f} s; load average {os.getloadavg()[0]:.1f}")
    rows = []
    try:
        for label, throttle, mib in CASES:
            topic = live.topic_name("estimate")
            live.topic_create(admin, topic, assignment=[[1, 2], [2, 1]] * 3)
            producer = None
            try:
                live.fill(args.bootstrap, topic, 6, mib * 1024 * 1024)
                cluster = live.cluster_registered(
                    args.bootstrap,
                    user,
                    [topic],
                    throttle_bytes_per_sec=throttle,
                    four_eyes=False,  # one user requests and approves
                )
                producer = AckedProducer.at_bytes_rate(
                    bootstrap=args.bootstrap,
                    topic=topic,
                    partitions=6,
                    bytes_per_second=args.write_rate,
                    record_size=1_000,
                    linger_ms=20,
                    keys_kept=False,
                ).start()
                # Two sample rounds 10 s apart and an aggregation: a window with the rates.
                for _ in range(2):
                    assert cluster_sync(cluster=cluster)
                    metrics_sample(cluster=cluster)
                    time.sleep(10)
                metrics_sample(cluster=cluster)
                aggregation_run(cluster=cluster, spark=spark)
                plan = plan_request(cluster=cluster, user=user, mode="add-brokers", brokers=[3])
                # Unthrottled, a first run has no pace to be timed by: it only sets one.
                runs = (
                    ("warm-up", "rollback", "forward") if not throttle else ("forward", "rollback")
                )
                for n, which in enumerate(runs):
                    plan_approve(plan=plan, user=user)
                    plan = execution_run(plan=plan, poll_interval=0.5, max_seconds=900)
                    assert plan.state == PlanState.COMPLETED, plan.error
                    check = plan_estimate_check(plan=plan)
                    if which != "warm-up":
                        rows.append((label, which, check))
                    print(
                        f"{label:>12} {which:>8}: bytes estimated "
                        f"{check.bytes_estimate / 1e6:8.1f} MB, "
                        f"copied {check.bytes_copied / 1e6:8.1f} MB "
                        f"({_pct(check.bytes_error_percent)}); copy time estimated "
                        f"{_s(check.duration_estimate)}, took {_s(check.duration_actual)} "
                        f"({_pct(check.duration_error_percent)})"
                        + (f"; {check.note}" if check.note else "")
                    )
                    if n + 1 == len(runs):
                        break
                    assert cluster_sync(cluster=cluster)
                    if which == "rollback":
                        plan = plan_request(
                            cluster=cluster, user=user, mode="add-brokers", brokers=[3]
                        )
                    else:
                        plan = plan_rollback_request(plan=plan, user=user, reason="bench")
            finally:
                if producer is not None:
                    producer.stop()
                live.topics_delete(admin, [topic])
    finally:
        spark.stop()
    print(f"calibration loop {calibration():.3f} s; load average {os.getloadavg()[0]:.1f}")
    bad = [
        (label, which)
        for label, which, c in rows
        if c.bytes_error_percent is None
        or abs(c.bytes_error_percent) > 10
        or c.duration_error_percent is None
        or abs(c.duration_error_percent) > 25
    ]
    print("targets (bytes ±10 %, time ±25 %): " + ("met" if not bad else f"missed by {bad}"))
    return 0


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:+.1f} %"


def _s(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f} s"


if __name__ == "__main__":
    raise SystemExit(main())
