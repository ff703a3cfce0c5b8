"""Benchmark: seconds from `make run` to the first traffic window stored, on this machine.

Times the calibration loop (`python3 -c 'sum(i*i for i in range(5_000_000))'`) and
reads the load average before, runs `scripts/run` (what `make run` does), then polls
the database until a measured broker-load window is there, and prints when each step
happened (seconds after `scripts/run` started): the run script returned, the first
aggregation run started and ended, the first window was visible; and the calibration
loop and load average again at the end. It leaves the product running (`make stop`).

    .venv/bin/python bench/bench_first_window.py [--fresh] [--timeout 900]

--fresh first stops what this checkout runs and removes `.run` and `db.sqlite3` (the
README's "start afresh"): a first start, as on a new clone with its jars fetched.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
CALIBRATION = "sum(i*i for i in range(5_000_000))"


def calibration_seconds() -> float:
    started = time.monotonic()
    subprocess.run(["python3", "-c", CALIBRATION], check=True)
    return time.monotonic() - started


def machine_line(label: str) -> str:
    one, five, fifteen = os.getloadavg()
    return (
        f"{label}: calibration loop {calibration_seconds():.2f} s, "
        f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="stop, remove .run and the db")
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args()
    os.chdir(REPO)
    if args.fresh:
        subprocess.run(["scripts/stop"], check=False, capture_output=True)
        subprocess.run(["scripts/dev-cluster", "down"], check=False, capture_output=True)
        shutil.rmtree(".run", ignore_errors=True)
        Path("db.sqlite3").unlink(missing_ok=True)
    print(machine_line("before"), flush=True)

    started = time.monotonic()
    subprocess.run(["scripts/run"], check=True, stdout=subprocess.DEVNULL)
    returned = time.monotonic() - started
    print(f"scripts/run returned after {returned:.1f} s", flush=True)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "balancer_site.settings")
    import django

    django.setup()
    from apps.metrics.models import AggregationRun, BrokerLoad

    first_run_seen = first_run_done = None
    while time.monotonic() - started < args.timeout:
        now = time.monotonic() - started
        runs = AggregationRun.objects.order_by("started_at")
        if first_run_seen is None and runs.exists():
            first_run_seen = now
            print(f"first aggregation run seen at {now:.1f} s", flush=True)
        if first_run_done is None and runs.exclude(status=AggregationRun.Status.RUNNING).exists():
            first_run_done = now
            run = runs.exclude(status=AggregationRun.Status.RUNNING).first()
            took = (run.finished_at - run.started_at).total_seconds()
            print(f"first aggregation run ended at {now:.1f} s ({run.status}, {took:.1f} s)")
        window = BrokerLoad.objects.filter(measured=True).order_by("window_end").first()
        if window is not None:
            span = (window.window_end - window.window_start).total_seconds()
            print(
                f"first traffic window visible at {now:.1f} s after scripts/run started "
                f"(window of {span:.0f} s ending {window.window_end:%H:%M:%S} UTC)",
                flush=True,
            )
            print(machine_line("after"), flush=True)
            return 0
        time.sleep(0.5)
    print(f"no traffic window within {args.timeout:.0f} s")
    print(machine_line("after"), flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
