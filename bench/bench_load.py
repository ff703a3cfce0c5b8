"""Benchmark: Daphne under load while a plan executes (issue 13 item 3).

Sets up, on loopback only: the dev cluster and Redis (scripts/dev_cluster, your
KAFKA_DEV_* / REDIS_URL ports; started only if not running, left as found), a scratch
SQLite database (WAL), Daphne on --port, a Celery worker (`celery` queue, solo pool)
running the executor, and an approved plan moving 4 partitions onto broker 3 at a
throttle slow enough to outlast the run. Then Locust (bench/requirements-load.txt,
installed into .venv with pip on first use: `make test` never needs it) runs
--clients websocket clients signed in to the dashboard's live paths and --rps
token-authenticated API reads per second for --seconds, while this process samples
the RSS of Daphne and the worker each second and publishes one probe event a second
to the cluster's websocket groups (its delivery time is the websocket message
latency). Prints p50/p99 per request kind, errors, and memory; tears everything down.

    .venv/bin/python bench/bench_load.py [--clients 200] [--rps 50] [--seconds 120]
"""

from __future__ import annotations

import argparse
import base64
import csv
import importlib.util
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for extra in (REPO, REPO / "scripts"):
    sys.path.insert(0, str(extra))

REDIS_DB = 14  # ours alone: the dev server uses 0, browser tests 11, fault tests 12
LOCUSTFILE = REPO / "bench" / "locustfile_load.py"
REQUIREMENTS = REPO / "bench" / "requirements-load.txt"
# p0-p3 on brokers 1 and 2, moved onto broker 3 (the faults scenario's plan).
PLACEMENT = [[1, 2], [2, 1], [1, 2], [2, 1]]
TARGETS = {0: [3, 1], 1: [3, 2], 2: [3, 1], 3: [3, 2]}


def locust_ensure() -> None:
    """Install Locust into this interpreter's environment the first time, saying so."""
    if all(importlib.util.find_spec(m) for m in ("locust", "websocket", "psutil")):
        return
    print(f"installing {REQUIREMENTS.relative_to(REPO)} into {sys.prefix} with pip (once)")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS)], check=True
    )


def _wait_up(url: str, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[2:4]} exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s")


def _end(process: subprocess.Popen | None) -> None:
    if process is None or process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


class Sampler(threading.Thread):
    """RSS (process and children) and CPU of the named processes, each `every` seconds."""

    def __init__(self, processes: dict[str, int], every: float = 1.0) -> None:
        super().__init__(daemon=True)
        import psutil

        self.procs = {name: psutil.Process(pid) for name, pid in processes.items()}
        self.rss: dict[str, list[int]] = {name: [] for name in processes}
        self.cpu: dict[str, float] = {}
        self.every = every
        self.stopped = threading.Event()

    def _tree_rss(self, proc) -> int:
        total = 0
        for p in [proc, *proc.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except Exception:  # noqa: BLE001, S112 - a child that just ended
                continue
        return total

    def run(self) -> None:
        import psutil

        start = {name: sum(p.cpu_times()[:2]) for name, p in self.procs.items()}
        last = dict(start)
        began = time.monotonic()
        while not self.stopped.wait(self.every):
            for name, proc in self.procs.items():
                try:
                    last[name] = sum(proc.cpu_times()[:2])
                    self.rss[name].append(self._tree_rss(proc))
                except psutil.NoSuchProcess:  # Locust ends just before we stop sampling
                    continue
        elapsed = time.monotonic() - began
        self.cpu = {name: (last[name] - start[name]) / elapsed for name in self.procs}


def probes_publish(*, cluster_id: int, stop: threading.Event) -> int:
    """One probe a second to the cluster's websocket groups; returns how many were sent."""
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    from apps.dashboard.events import cluster_group_name, plans_group_name

    layer = get_channel_layer()
    sent = 0
    while not stop.wait(1.0):
        for group, kind in (
            (cluster_group_name(cluster_id=cluster_id), "cluster.changed"),
            (plans_group_name(cluster_id=cluster_id), "plan.changed"),
        ):
            message = {"type": kind, "cluster_id": cluster_id, "probe_sent": time.time()}
            async_to_sync(layer.group_send)(group, message)
        sent += 1
    return sent


def stats_read(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return [row for row in csv.DictReader(f) if row["Name"] != "Aggregated"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=200, help="websocket clients")
    parser.add_argument("--rps", type=int, default=50, help="API requests per second")
    parser.add_argument("--seconds", type=int, default=120)
    parser.add_argument("--port", type=int, default=int(os.environ.get("LOAD_PORT", "18321")))
    parser.add_argument("--throttle", type=int, default=20_000, help="plan throttle, bytes/s")
    args = parser.parse_args()
    if not (0 < args.clients <= 1000 and 0 < args.rps <= 500 and 0 < args.seconds <= 600):
        parser.error("bounded: clients 1-1000, rps 1-500, seconds 1-600")
    locust_ensure()

    from dev_cluster import DevCluster

    scratch = Path(tempfile.mkdtemp(prefix="bench-load-"))
    cluster_dev = DevCluster()
    with cluster_dev.use(kafka=True, redis=True):
        return _bench(args, scratch, cluster_dev)


def _bench(args, scratch: Path, cluster_dev) -> int:  # noqa: C901, PLR0915 - one script
    redis_url = cluster_dev.redis_url.rsplit("/", 1)[0] + f"/{REDIS_DB}"
    bootstrap = cluster_dev.bootstrap_servers
    os.environ.update(
        {
            "DATABASE_URL": f"sqlite:///{scratch / 'load.sqlite3'}",
            "REDIS_URL": redis_url,
            "CELERY_BROKER_URL": redis_url,
            "CELERY_TASK_ALWAYS_EAGER": "0",
            # Production-like: DEBUG keeps every SQL query in memory, which would
            # inflate the RSS figures.
            "DJANGO_DEBUG": "0",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(40),
            "BALANCER_SECRET_KEYS": base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "EXECUTOR_POLL_INTERVAL": "1",
            "LOG_LEVEL": "WARNING",
            "DJANGO_SETTINGS_MODULE": "balancer_site.settings",
        }
    )
    import django

    django.setup()
    from confluent_kafka.admin import AdminClient
    from devkit import live
    from devkit.users import user_make
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from apps.api.services import token_create
    from apps.kafka_layer.clients import client_config_build
    from apps.plans.models import MoveState, PlanMode, PlanOrigin, PlanState
    from apps.plans.services import plan_approve, plan_create

    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:  # Daphne, the worker and this process share it
        cursor.execute("PRAGMA journal_mode=WAL")

    viewer = user_make("load-viewer", "viewer")
    approver = user_make("load-admin", "admin")
    token = token_create(user=viewer)
    web = Client()
    web.force_login(viewer, backend="django.contrib.auth.backends.ModelBackend")
    cookie_name = settings.SESSION_COOKIE_NAME
    session_cookie = f"{cookie_name}={web.cookies[cookie_name].value}"

    logs: list = []

    def spawn(name: str, argv: list[str]) -> subprocess.Popen:
        log = open(scratch / f"{name}.log", "ab")  # noqa: SIM115 - closed at the end
        logs.append(log)
        return subprocess.Popen(
            argv, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    admin = AdminClient(client_config_build(bootstrap_servers=bootstrap))
    topic = live.topic_name("load")
    base = f"http://127.0.0.1:{args.port}"
    daphne = worker = locust = None
    finished = False
    try:
        daphne = spawn(
            "daphne",
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(args.port)]
            + ["balancer_site.asgi:application"],
        )
        worker = spawn(
            "worker",
            [sys.executable, "-m", "celery", "-A", "balancer_site", "worker"]
            + ["--loglevel=WARNING", "--pool=solo", "-Q", "celery", "-n", f"load-{args.port}@%h"],
        )
        _wait_up(base + "/accounts/login/", daphne)

        # Enough data that broker 3 copies it for the whole run and a minute more, with
        # room: at 50 kB/s the dev cluster copied 27 MB within the 2-minute run (the
        # leaders' and the follower's throttles together let through ~4x the setting).
        per_partition = 8 * args.throttle * (args.seconds + 60) // len(TARGETS)
        print(
            f"setup: topic {topic}, 4 x {per_partition / 1e6:.1f} MB moving onto broker 3 "
            f"at {args.throttle / 1e3:.0f} kB/s"
        )
        live.topic_create(admin, topic, assignment=PLACEMENT)
        live.fill(bootstrap, topic, len(PLACEMENT), per_partition)
        cluster = live.cluster_registered(
            bootstrap, approver, [topic], throttle_bytes_per_sec=args.throttle, four_eyes=False
        )
        plan = plan_create(
            cluster=cluster,
            origin=PlanOrigin.OPERATOR,
            mode=PlanMode.FULL,
            reassignment={
                "version": 1,
                "partitions": [
                    {"topic": topic, "partition": p, "replicas": r} for p, r in TARGETS.items()
                ],
            },
            assignment_before={(topic, p): r for p, r in enumerate(PLACEMENT)},
            report={},
            actor=approver,
        )
        plan_approve(plan=plan, user=approver)  # the worker picks the execution up
        deadline = time.monotonic() + 90
        while not plan.moves.filter(state=MoveState.IN_PROGRESS, bytes_done__gt=0).exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the plan did not start copying; see {scratch}/worker.log")
            time.sleep(0.5)
        print(f"plan #{plan.pk} executing; load: {args.clients} websockets, {args.rps} req/s")

        stop_probes = threading.Event()
        probes: list[int] = []
        prober = threading.Thread(
            target=lambda: probes.append(probes_publish(cluster_id=cluster.pk, stop=stop_probes)),
            daemon=True,
        )
        env = {
            **os.environ,
            "LOAD_CLUSTER": cluster.name,
            "LOAD_PLAN_ID": str(plan.pk),
            "LOAD_TOKEN": token,
            "LOAD_SESSION_COOKIE": session_cookie,
            "LOAD_CLIENTS": str(args.clients),
            "LOAD_RPS": str(args.rps),
        }
        users = args.clients + args.rps
        prober.start()
        began = time.monotonic()
        load_began = time.time()
        locust = subprocess.Popen(
            [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless"]
            + ["-u", str(users), "-r", str(max(10, users // 5)), "-t", f"{args.seconds}s"]
            + ["--host", base, "--csv", str(scratch / "locust"), "--only-summary"]
            + ["--stop-timeout", "5", "--loglevel", "WARNING", "--exit-code-on-error", "0"],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(scratch / "locust.log", "ab"),  # noqa: SIM115 - short-lived
            start_new_session=True,
        )
        # Locust's own CPU too: a saturated client would inflate the latencies it measures.
        sampler = Sampler({"daphne": daphne.pid, "celery worker": worker.pid, "locust": locust.pid})
        sampler.start()
        locust.wait(timeout=args.seconds + 90)
        ran = time.monotonic() - began
        sampler.stopped.set()
        stop_probes.set()
        sampler.join()
        prober.join()

        plan.refresh_from_db()
        done = plan.moves.exclude(state=MoveState.IN_PROGRESS).count()
        copied = sum(m.bytes_done for m in plan.moves.all())
        _report(
            args,
            ran,
            stats_read(scratch / "locust_stats.csv"),
            sampler,
            probes[0] if probes else 0,
            failures_read(scratch / "locust_failures.csv"),
            f"plan #{plan.pk} {plan.state} during the run: {copied / 1e6:.1f} MB copied, "
            f"{done}/{plan.moves.count()} moves ended",
        )
        finished = True
        if plan.state != PlanState.EXECUTING:
            ended = plan.finished_at.timestamp() - load_began if plan.finished_at else None
            at = f"{ended:.0f} s into the load" if ended is not None else "during the load"
            print(f"warning: the plan ended {at}: raise the data or lower --throttle")
            return 1
        return 0
    finally:
        _end(locust)
        _end(worker)
        live.leftovers_clean(bootstrap, [topic])  # fails the plan: cancels, unthrottles
        live.topics_delete(admin, [topic])
        _end(daphne)
        for log in logs:
            log.close()
        if finished:
            shutil.rmtree(scratch, ignore_errors=True)
        else:  # the logs say why
            print(f"logs of Daphne, the worker and Locust kept in {scratch}")


def failures_read(path: Path) -> list[str]:
    if not path.exists():
        return []
    with path.open() as f:
        return [f"{r['Occurrences']} x {r['Name']}: {r['Error']}" for r in csv.DictReader(f)]


def _report(
    args, ran: float, rows, sampler: Sampler, probes: int, failures: list[str], plan_line: str
) -> None:
    print(f"\nran {ran:.0f} s: {args.clients} websocket clients, {args.rps} API requests/s")
    print(f"{'kind':6} {'name':44} {'count':>7} {'errors':>6} {'p50 ms':>7} {'p99 ms':>7}")
    errors = 0
    for row in rows:
        errors += int(row["Failure Count"])
        print(
            f"{row['Type']:6} {row['Name']:44} {row['Request Count']:>7} "
            f"{row['Failure Count']:>6} {row['50%']:>7} {row['99%']:>7}"
        )
    http = [r for r in rows if r["Type"] == "GET"]
    achieved = sum(int(r["Request Count"]) for r in http) / ran
    print(f"API: {achieved:.1f} requests/s achieved; errors in all: {errors}")
    for line in failures[:10]:
        print(f"  error: {line}")
    print(f"probes published: {probes} to each group (cluster.changed and plan.changed)")
    for name, samples in sampler.rss.items():
        if samples:
            mb = [s / 2**20 for s in samples]
            print(
                f"RSS {name}: start {mb[0]:.0f} MB, max {max(mb):.0f} MB, end {mb[-1]:.0f} MB "
                f"({len(mb)} samples); CPU {sampler.cpu.get(name, 0):.0%} of a core"
            )
    print(plan_line)
    print("load average at the end (1/5/15 min): {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


if __name__ == "__main__":
    raise SystemExit(main())
