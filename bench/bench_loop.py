"""Benchmark: the closed loop of issue 15 on the dev cluster, with its timeline.

A new topic of 6 partitions, RF 1, all on broker 1, fed at ~3 MB/s; policy:
auto-approve, throttle 50 MB/s. Prints, per run, the seconds from the first skewed
record to: the first window measuring it stored, plan proposed, approved, executed,
bytes-in within ±10 % of the mean; then whether it stayed balanced with no further
plan for the observation period. Uses a scratch SQLite database and Spark local[2].

    scripts/dev-cluster up
    .venv/bin/python bench/bench_loop.py --bootstrap "$(scripts/dev-cluster bootstrap-servers)" \\
        [--runs 3] [--observe 120] [--sample-every 10] [--slide 10] [--window 60] \\
        [--no-after-sample] [--trace]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:29091,127.0.0.1:29092,127.0.0.1:29093")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--observe", type=float, default=120.0, help="seconds to watch after")
    parser.add_argument("--sample-every", type=float, default=10.0)
    parser.add_argument("--slide", type=int, default=10, help="METRICS_WINDOW_SLIDE_SECONDS")
    parser.add_argument("--window", type=int, default=60, help="METRICS_WINDOW_SECONDS")
    parser.add_argument(
        "--no-after-sample",
        action="store_true",
        help="METRICS_AGGREGATE_AFTER_SAMPLE off: aggregate on the interval tick only",
    )
    parser.add_argument("--rate", type=float, default=3_000_000, help="bytes/s into the topic")
    parser.add_argument("--trace", action="store_true", help="print every round and run")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp()) / "loop.sqlite3"
    os.environ["DATABASE_URL"] = f"sqlite:///{scratch}"
    os.environ["METRICS_WINDOW_SLIDE_SECONDS"] = str(args.slide)
    os.environ["METRICS_WINDOW_SECONDS"] = str(args.window)
    os.environ["METRICS_AGGREGATE_INTERVAL"] = str(args.slide)
    os.environ["METRICS_AGGREGATE_AFTER_SAMPLE"] = "false" if args.no_after_sample else "true"
    os.environ["METRICS_SAMPLE_INTERVAL"] = str(args.sample_every)
    os.environ["EXECUTOR_POLL_INTERVAL"] = "1"
    os.environ["METRICS_TOPIC"] = f"__loop_metrics_{uuid.uuid4().hex[:6]}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "balancer_site.settings")
    import django
    from django.core.management import call_command
    from django.db import connection

    django.setup()
    from django.conf import settings

    # The beat thread and the aggregation both write: a deferred transaction that
    # upgrades to a write behind the other one gets "database is locked" at once
    # (four lost runs in one trace); IMMEDIATE takes the lock first and waits.
    settings.DATABASES["default"].setdefault("OPTIONS", {})["transaction_mode"] = "IMMEDIATE"
    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:  # the beat thread writes while the loop does
        cursor.execute("PRAGMA journal_mode=WAL")

    from devkit.loop_scenario import loop_run, topic_delete

    from apps.clusters.models import Cluster
    from spark_jobs.session import spark_session_build

    spark = spark_session_build(
        master="local[2]",
        app_name="bench-loop",
        extra_conf={"spark.sql.shuffle.partitions": "2", "spark.driver.memory": "1g"},
    )
    results = []
    try:
        for n in range(1, args.runs + 1):
            cluster = Cluster.objects.create(name=f"loop-{n}", bootstrap_servers=args.bootstrap)
            topic = f"loop-{uuid.uuid4().hex[:8]}"
            print(
                f"run {n}: topic {topic}, {args.rate / 1e6:.1f} MB/s, window {args.window} s "
                f"sliding {args.slide} s, sample every {args.sample_every:g} s, aggregate "
                + ("on the tick" if args.no_after_sample else "after each round and on the tick")
            )
            try:
                t = loop_run(
                    cluster=cluster,
                    bootstrap=args.bootstrap,
                    spark=spark,
                    topic=topic,
                    rate=args.rate,
                    sample_every=args.sample_every,
                    observe_s=args.observe,
                    timeout_s=300 + args.observe,
                )
            finally:
                topic_delete(bootstrap=args.bootstrap, topic=topic)
            results.append(t)
            if args.trace:
                print(f"run {n} trace (s after the skew began):")
                for at, what in t.trace:
                    print(f"  {at:6.1f}  {what}")
            print(f"run {n} timeline (s after the skew began):")
            for label, at in t.rows():
                print(f"  {'—' if at is None else f'{at:6.1f}':>6}  {label}")
            print(
                f"  plan: {t.plan_moves} moves, {t.plan_bytes / 1e6:.1f} MB; trigger: "
                f"{t.plan_trigger}"
            )
            print(
                f"  produced {t.produced_rate / 1e6:.2f} MB/s; watched {t.observed_s:.0f} s "
                f"after balanced: {t.plans_after_balanced} further plan(s), max spread "
                + (
                    "—"
                    if t.max_spread_after_balanced is None
                    else f"{t.max_spread_after_balanced:.1%}"
                )
            )
            time.sleep(1)
    finally:
        spark.stop()
    print("load average at the end (1/5/15 min): {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    ok = [t.balanced for t in results if t.balanced is not None]
    print(f"balanced in: {', '.join(f'{b:.1f} s' for b in ok) or 'never'}")
    return 0 if len(ok) == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
