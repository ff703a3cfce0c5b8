"""Benchmark: `make run` under load for a long while, counting "database is locked" and
5xx answers (issue 25 target 2).

Runs `scripts/run` in this checkout (the whole product: dev cluster, Redis, workers,
beat, Daphne, demo traffic; BALANCER_REPLICAS passes through), on DATABASE_URL if set
(e.g. a throwaway PostgreSQL) else the default SQLite file. It keeps a plan executing
all along: a remove-brokers plan of --broker on the demo cluster approved at
--throttle, an add-brokers plan of it when that ends, drained again, and so on.
Meanwhile Locust (bench/locustfile_load.py: --clients websocket clients, --rps API
reads per second) runs for --seconds. Prints Locust's counts, the 5xx answers, the
"database is locked" lines of every process's log, the plans that ended, the share of
the run a plan was executing, and the calibration loop; cancels
the running plan and runs `scripts/stop`.

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
import threading
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


class PlanCycle(threading.Thread):
    """Keeps a plan executing for the whole run: drains --broker (remove-brokers),
    undrains and fills it again when that ends (add-brokers), drains again, each
    approved at --throttle. A request the planner finds nothing to do for is followed by
    the other one. Counts the plans."""

    MODES = ("remove-brokers", "add-brokers")

    def __init__(self, base: str, token: str, *, broker: int, throttle: int) -> None:
        super().__init__(daemon=True)
        self.base, self.broker, self.throttle = base, broker, throttle
        self.api = {"Authorization": f"Token {token}"}
        self.stopped = threading.Event()
        self.ended: dict[str, int] = {}
        self.counted: set[int] = set()
        self.current: int | None = None
        self.mode = 0
        self.looks = 0
        self.executing = 0

    def _post(self, path: str, body: dict, expect: int) -> dict:
        answer = requests.post(f"{self.base}{path}", json=body, headers=self.api, timeout=180)
        assert answer.status_code == expect, f"{path}: {answer.status_code} {answer.text[:300]}"
        return answer.json()

    def _state(self, plan_id: int) -> str:
        url = f"{self.base}/api/plans/{plan_id}/"
        return requests.get(url, headers=self.api, timeout=60).json()["state"]

    def start_next(self) -> None:
        mode = self.MODES[self.mode]
        self.mode = 1 - self.mode  # whatever the answer: the other one next
        if mode == "add-brokers":  # a drained broker takes replicas once undrained
            requests.post(
                f"{self.base}/api/clusters/demo/drained-brokers/{self.broker}/undrain/",
                json={"reason": "bench"},
                headers=self.api,
                timeout=60,
            )
        made = self._post(
            "/api/clusters/demo/plans/",
            {"mode": mode, "brokers": [self.broker], "reason": "bench"},
            201,
        )
        self._post(
            f"/api/plans/{made['id']}/approve/",
            {"reason": "bench", "throttle_bytes_per_sec": self.throttle},
            200,
        )
        self.current = made["id"]

    def run(self) -> None:
        while not self.stopped.wait(5):
            try:
                state = self._state(self.current) if self.current else "none"
                self.looks += 1
                self.executing += state == "executing"
                if state in ("completed", "failed", "cancelled", "stale", "rejected", "none"):
                    if self.current and self.current not in self.counted:
                        self.counted.add(self.current)  # once, however many retries
                        self.ended[state] = self.ended.get(state, 0) + 1
                    self.start_next()
            except (AssertionError, requests.RequestException, KeyError) as exc:
                print(f"plan cycle: {exc}", flush=True)


def locked_lines() -> dict[str, int]:
    return {
        log.name: len(LOCKED.findall(log.read_text(errors="replace")))
        for log in sorted(LOGS.glob("*.log"))
    }


FOUR_EYES_OFF = """
from apps.audit.services import actor_system
from apps.clusters.models import Cluster
from apps.plans.services import policy_get, policy_update
policy = policy_get(cluster=Cluster.objects.get(name="demo"))
bench = actor_system(name="bench_lockfree")
policy_update(policy=policy, actor=bench, changes={"four_eyes": False})
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=1800)
    parser.add_argument("--clients", type=int, default=200, help="websocket clients")
    parser.add_argument("--rps", type=int, default=50, help="API requests per second")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument("--broker", type=int, default=3, help="broker the plan drains")
    parser.add_argument("--throttle", type=int, default=500_000, help="bytes/s")
    args = parser.parse_args()
    password = os.environ.get("BALANCER_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
    env = {**os.environ, "PORT": str(args.port), "BALANCER_ADMIN_PASSWORD": password}
    base = f"http://127.0.0.1:{args.port}"
    database = os.environ.get("DATABASE_URL", "sqlite (default file)").split("@")[-1]
    print(f"calibration loop: {calibrate():.3f} s; database: {database}", flush=True)
    locust_ensure()
    subprocess.run(["scripts/run"], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
    # The bench's one admin requests and approves each plan: four-eyes off for the demo.
    shell = [".venv/bin/python", "manage.py", "shell", "-c", FOUR_EYES_OFF]
    subprocess.run(shell, cwd=REPO, env=env, check=True)
    plan_id = None
    try:
        token = requests.post(
            f"{base}/api/auth/token/",
            data={"username": "admin", "password": password},
            timeout=30,
        ).json()["token"]
        session = signed_in(base, "admin", password)
        cycle = PlanCycle(base, token, broker=args.broker, throttle=args.throttle)
        for _ in range(24):  # the first sync and window may still be on their way
            try:
                cycle.start_next()
                break
            except AssertionError as exc:
                print(f"plan cycle: {exc}", flush=True)
                time.sleep(5)
        cycle.start()
        plan_id = cycle.current
        print(f"plan #{plan_id} approved; load for {args.seconds} s", flush=True)
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
        cycle.stopped.set()
        cycle.join()
        plan_id = cycle.current
        report(scratch, ran, base, token, plan_id)
        print(f"plans ended during the run: {cycle.ended}", flush=True)
        share = cycle.executing / max(1, cycle.looks)
        print(f"a plan executing at {share:.0%} of {cycle.looks} looks (every 5 s)", flush=True)
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
