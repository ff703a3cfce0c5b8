"""Benchmark: `make run` under load for a long while, counting "database is locked" and
5xx answers (issue 25 target 2).

Runs `scripts/run` in this checkout (the whole product: dev cluster, Redis, workers,
beat, Daphne, demo traffic; BALANCER_REPLICAS passes through), on DATABASE_URL if set
(e.g. a throwaway PostgreSQL) else the default SQLite file. It signs in, asks for a
remove-brokers plan of --broker on the demo cluster and approves it at a --throttle slow
enough to outlast the run, then runs Locust (bench/locustfile_load.py: --clients
websocket clients, --rps API reads per second) for --seconds. Prints Locust's counts,
the 5xx answers, the "database is locked" lines of every process's log, the plan's
state, and the calibration loop; cancels the plan and runs `scripts/stop`.

    BALANCER_ADMIN_PASSWORD=... .venv/bin/python bench/bench_lockfree.py \
        [--seconds 1800] [--clients 200] [--rps 50] [--port 8000]
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path

import requests
from bench_load import locust_ensure

REPO = Path(__file__).resolve().parent.parent
LOCUSTFILE = REPO / "bench" / "locustfile_load.py"
LOGS = REPO / ".run" / "logs"
LOCKED = re.compile(r"database is locked", re.IGNORECASE)


def calibrate() -> float:
    started = time.perf_counter()
    sum(i * i for i in range(5_000_000))
    return time.perf_counter() - started


def signed_in(base: str, username: str, password: str) -> requests.Session:
    session = requests.Session()
    page = session.get(f"{base}/accounts/login/", timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert token, "no CSRF token on the sign-in page"
    answer = session.post(
        f"{base}/accounts/login/",
        data={"username": username, "password": password, "csrfmiddlewaretoken": token[1]},
        headers={"Referer": f"{base}/accounts/login/"},
        timeout=30,
    )
    assert "sessionid" in session.cookies, f"sign-in failed: {answer.status_code}"
    return session


def plan_started(base: str, token: str, *, broker: int, throttle: int) -> int:
    """A remove-brokers plan of `broker`, approved at `throttle` bytes/s: its id."""
    api = {"Authorization": f"Token {token}"}
    made = requests.post(
        f"{base}/api/clusters/demo/plans/",
        json={"mode": "remove-brokers", "brokers": [broker], "reason": "bench_lockfree"},
        headers=api,
        timeout=120,
    )
    assert made.status_code == 201, made.text
    plan_id = made.json()["id"]
    approved = requests.post(
        f"{base}/api/plans/{plan_id}/approve/",
        json={"reason": "bench_lockfree", "throttle_bytes_per_sec": throttle},
        headers=api,
        timeout=60,
    )
    assert approved.status_code == 200, approved.text
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        state = requests.get(f"{base}/api/plans/{plan_id}/", headers=api, timeout=30).json()
        if state["state"] == "executing":
            return plan_id
        time.sleep(1)
    raise RuntimeError(f"plan #{plan_id} did not start executing")


def locked_lines() -> dict[str, int]:
    return {
        log.name: len(LOCKED.findall(log.read_text(errors="replace")))
        for log in sorted(LOGS.glob("*.log"))
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=1800)
    parser.add_argument("--clients", type=int, default=200, help="websocket clients")
    parser.add_argument("--rps", type=int, default=50, help="API requests per second")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument("--broker", type=int, default=3, help="broker the plan drains")
    parser.add_argument("--throttle", type=int, default=50_000, help="bytes/s")
    args = parser.parse_args()
    password = os.environ.get("BALANCER_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
    env = {**os.environ, "PORT": str(args.port), "BALANCER_ADMIN_PASSWORD": password}
    base = f"http://127.0.0.1:{args.port}"
    database = os.environ.get("DATABASE_URL", "sqlite (default file)").split("@")[-1]
    print(f"calibration loop: {calibrate():.3f} s; database: {database}", flush=True)
    locust_ensure()
    subprocess.run(["scripts/run"], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
    plan_id = None
    try:
        token = requests.post(
            f"{base}/api/auth/token/",
            data={"username": "admin", "password": password},
            timeout=30,
        ).json()["token"]
        session = signed_in(base, "admin", password)
        plan_id = plan_started(base, token, broker=args.broker, throttle=args.throttle)
        print(f"plan #{plan_id} executing; load for {args.seconds} s", flush=True)
        scratch = REPO / ".run" / "bench-lockfree"
        scratch.mkdir(parents=True, exist_ok=True)
        users = args.clients + args.rps
        began = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless"]
            + ["-u", str(users), "-r", str(max(10, users // 5)), "-t", f"{args.seconds}s"]
            + ["--host", base, "--csv", str(scratch / "locust"), "--only-summary"]
            + ["--stop-timeout", "5", "--loglevel", "WARNING", "--exit-code-on-error", "0"],
            cwd=REPO,
            env={
                **os.environ,
                "LOAD_CLUSTER": "demo",
                "LOAD_PLAN_ID": str(plan_id),
                "LOAD_TOKEN": token,
                "LOAD_SESSION_COOKIE": f"sessionid={session.cookies['sessionid']}",
                "LOAD_CLIENTS": str(args.clients),
                "LOAD_RPS": str(args.rps),
            },
            stdout=subprocess.DEVNULL,
            stderr=(scratch / "locust.log").open("ab"),
            timeout=args.seconds + 300,
            check=False,
        )
        ran = time.monotonic() - began
        report(scratch, ran, base, token, plan_id)
    finally:
        if plan_id is not None:
            requests.post(
                f"{base}/api/plans/{plan_id}/cancel/",
                json={"reason": "bench_lockfree ends"},
                headers={"Authorization": f"Token {token}"},
                timeout=60,
            )
        subprocess.run(["scripts/stop"], cwd=REPO, env=env, stdout=subprocess.DEVNULL)
    print(f"calibration loop at the end: {calibrate():.3f} s", flush=True)
    return 0


def report(scratch: Path, ran: float, base: str, token: str, plan_id: int) -> None:
    with (scratch / "locust_stats.csv").open() as f:
        rows = [r for r in csv.DictReader(f) if r["Name"] != "Aggregated"]
    failures: list[dict] = []
    if (scratch / "locust_failures.csv").exists():
        with (scratch / "locust_failures.csv").open() as f:
            failures = list(csv.DictReader(f))
    five = sum(int(f["Occurrences"]) for f in failures if re.search(r"\b5\d\d\b", f["Error"]))
    requests_made = sum(int(r["Request Count"]) for r in rows)
    errors = sum(int(r["Failure Count"]) for r in rows)
    print(f"\nran {ran:.0f} s: {requests_made} requests and websocket events, {errors} errors")
    for f in failures[:10]:
        print(f"  {f['Occurrences']} x {f['Method']} {f['Name']}: {f['Error'][:200]}")
    print(f"5xx answers: {five}")
    locked = locked_lines()
    print(f'"database is locked" in the logs: {sum(locked.values())} {locked}')
    state = requests.get(
        f"{base}/api/plans/{plan_id}/", headers={"Authorization": f"Token {token}"}, timeout=30
    ).json()["state"]
    print(f"plan #{plan_id} at the end of the load: {state}")
    print("load average (1/5/15 min): {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


if __name__ == "__main__":
    raise SystemExit(main())
