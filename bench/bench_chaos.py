"""Benchmark: the control plane under chaos (issue 25, target 4).

Starts the product with `BALANCER_REPLICAS=2` (`scripts/run`: two webs, two of every
worker, two beats) on a dev cluster, Redis, database and ports of its own, then for
`--seconds` (600) SIGKILLs a random control-plane process (its process group: either web,
any worker, either beat) every 20–40 s and starts it again 5 s later with
`scripts/run --restart NAME`, as a supervisor would; Redis is restarted once and broker 3
stopped and started once. Alongside:

- an acks=all producer (devkit AckedProducer) writes a topic placed on brokers 1 and 2
  only, and a new skewed topic is created every 60 s, so the periodic balancer (policy:
  replica distribution, every 20 s, auto-approval up to 1 TB) proposes plans, approves
  them itself and executes them;
- a read load GETs /healthz about 10 times a second, alternately on both webs;
- the cluster's last sync time is read from the database every second.

Then it stops the chaos, turns detection off, waits for every plan to end, reads the
topic back and prints: the kill schedule (time, process, pid), records acked / read /
lost, plans made / ended / executed twice, reassignments sent twice (a partition in two
sent batches of one plan), the largest gap between two syncs against 2 sync intervals,
and read requests per web with those that failed while that web was up. Exit 1 when a
pass condition fails. Prints the calibration loop and the load average before and after.

    .venv/bin/python bench/bench_chaos.py [--seconds 600] [--seed 1]

Runs on free ports chosen at start and a work directory under .run/chaos-*, removed at
the end unless --keep.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))
CALIBRATION = "sum(i*i for i in range(5_000_000))"

# What the chaos kills: either web, any worker, either beat (scripts/run's names).
VICTIMS = (
    "web",
    "web-2",
    "worker",
    "worker-2",
    "clusters-worker",
    "clusters-worker-2",
    "aggregator",
    "aggregator-2",
    "beat",
    "beat-2",
)
PROCESSES = (*VICTIMS, "traffic")
RESTART_AFTER = 5.0
SYNC_INTERVAL = 10.0
SKEWED_TOPIC_EVERY = 60.0
ENDED = {"completed", "failed", "cancelled", "rejected", "superseded", "stale"}
# Settings of the product under chaos (beside the defaults): a plan's killed executor is
# resumed after EXECUTOR_LEASE_SECONDS, shortened so one run shows several recoveries
# instead of waiting out 60 s. The round lease and the beat's leader lock stay at their
# defaults: they decide the gap between syncs this bench judges.
PRODUCT_SETTINGS = {
    "CLUSTER_SYNC_INTERVAL": str(SYNC_INTERVAL),
    "EXECUTOR_LEASE_SECONDS": "30",
    "EXECUTOR_RESUME_INTERVAL": "10",
    "EXECUTOR_POLL_INTERVAL": "1",
    "PLAN_LOADS_WAIT_SECONDS": "30",
    "DEMO_RATE": "256/s",
}


def free_port(span: int = 1) -> int:
    """A port with `span` free ports from it (a broker base, a web pair)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + span < 65000 and all(_free(port + i) for i in range(span)):
            return port


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@dataclass
class Site:
    """The product under chaos: its work directory, ports and environment."""

    workdir: Path
    web_port: int
    redis_port: int
    env: dict[str, str]
    pids_seen: set[int] = field(default_factory=set)

    @classmethod
    def make(cls, workdir: Path) -> Site:
        web_port = free_port(2)
        redis_port = free_port()
        env = {
            **os.environ,
            **PRODUCT_SETTINGS,
            "BALANCER_REPLICAS": "2",
            "BALANCER_RUN_DIR": str(workdir / "run"),
            "KAFKA_DEV_DIR": str(workdir / "kafka"),
            "KAFKA_DEV_BROKER_PORT_BASE": str(free_port(4)),
            "KAFKA_DEV_CONTROLLER_PORT": str(free_port()),
            "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{redis_port}/0",
            "DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite3'}",
            "PORT": str(web_port),
            "DJANGO_SETTINGS_MODULE": "balancer_site.settings",
        }
        env.pop("KAFKA_BOOTSTRAP_SERVERS", None)
        return cls(workdir=workdir, web_port=web_port, redis_port=redis_port, env=env)

    @property
    def database(self) -> Path:
        return self.workdir / "db.sqlite3"

    def port_of(self, name: str) -> int:
        return self.web_port + (1 if name == "web-2" else 0)

    def run(self, *args: str, timeout: float = 300) -> str:
        done = subprocess.run(
            list(args), cwd=REPO, env=self.env, capture_output=True, text=True, timeout=timeout
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"{' '.join(args)} failed: {done.stdout[-2000:]}{done.stderr[-2000:]}"
            )
        return done.stdout

    def shell(self, code: str) -> str:
        """Run `code` in `manage.py shell` on the site's database and settings."""
        return self.run(str(REPO / ".venv/bin/python"), "manage.py", "shell", "-c", code)

    def pid(self, name: str) -> int | None:
        path = self.workdir / "run" / "pids" / f"{name}.pid"
        with contextlib.suppress(OSError, ValueError):
            pid = int(path.read_text())
            self.pids_seen.add(pid)
            return pid
        return None

    def bootstrap(self) -> str:
        return self.run("scripts/dev-cluster", "bootstrap-servers").strip()

    def start(self) -> None:
        self.run("scripts/run", timeout=1200)
        for name in PROCESSES:
            self.pid(name)

    def stop(self) -> list[str]:
        """Stop everything; what is still running afterwards (should be nothing)."""
        for name in PROCESSES:
            self.pid(name)
        with contextlib.suppress(Exception):
            self.run("scripts/stop", timeout=300)
        with contextlib.suppress(Exception):
            self.run("scripts/dev-cluster", "down", timeout=300)
        with contextlib.suppress(Exception):
            self.run("scripts/dev-cluster", "redis-down", timeout=60)
        return self.leftovers()

    def leftovers(self) -> list[str]:
        """Processes of this site still alive: in a group it started, or naming its
        work directory or its Redis port."""
        ps = subprocess.run(
            ["ps", "-eo", "pid=,pgid=,args="], capture_output=True, text=True, check=True
        ).stdout
        left = []
        for line in ps.splitlines():
            pid, pgid, args = line.split(None, 2)
            if int(pid) == os.getpid() or args.startswith("ps "):
                continue
            if (
                int(pgid) in self.pids_seen
                or str(self.workdir) in args
                or f":{self.redis_port}" in args
            ):
                left.append(line.strip())
        return left


def healthy(port: int, timeout: float = 5) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


@dataclass
class Kill:
    at: float  # seconds since the chaos began
    name: str
    pid: int | None
    wall: datetime = field(default_factory=datetime.now)  # the beats' log clock
    restarted_at: float | None = None
    ready_at: float | None = None  # a web: when it answered again


@dataclass
class ReadLoad:
    """GETs /healthz about `rate` times a second, alternately on both webs."""

    ports: tuple[int, int]
    origin: float
    rate: float = 10.0
    requests: list[tuple[float, int, bool, str]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> ReadLoad:
        threading.Thread(target=self._run, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        i = 0
        while not self._stop.is_set():
            port = self.ports[i % 2]
            i += 1
            at = time.monotonic() - self.origin
            error = ""
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as r:
                    ok = r.status == 200
            except OSError as exc:
                ok, error = False, str(exc)[:120]
            self.requests.append((at, port, ok, error))
            self._stop.wait(1 / self.rate)


@dataclass
class SyncWatch:
    """Reads the cluster's last sync time from the site's database every second."""

    database: Path
    origin: float
    syncs: list[tuple[float, datetime]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> SyncWatch:
        threading.Thread(target=self._run, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            with contextlib.suppress(sqlite3.Error):
                db = sqlite3.connect(f"file:{self.database}?mode=ro", uri=True, timeout=5)
                try:
                    row = db.execute(
                        "SELECT last_synced_at FROM clusters_cluster WHERE name = 'demo'"
                    ).fetchone()
                finally:
                    db.close()
                if row and row[0]:
                    # Stored as naive UTC (Django's SQLite backend).
                    synced = datetime.fromisoformat(row[0]).replace(tzinfo=None)
                    if not self.syncs or self.syncs[-1][1] != synced:
                        self.syncs.append((time.monotonic() - self.origin, synced))

    def largest_gap(self, until: datetime) -> float:
        """Seconds of the longest stretch without a sync, up to `until`."""
        times = [s for _, s in self.syncs] + [until]
        return max((b - a).total_seconds() for a, b in zip(times, times[1:], strict=False))


POLICY_CODE = """
from apps.audit.services import actor_system
from apps.clusters.models import Cluster
from apps.plans.services import policy_get, policy_update
policy_update(
    policy=policy_get(cluster=Cluster.objects.get(name="demo")),
    actor=actor_system(name="chaos-bench"),
    changes=%s,
)
"""

FIGURES_CODE = """
import json
from collections import Counter, defaultdict
from apps.audit.models import AuditEvent
from apps.plans.models import Plan, PlanMove
plans = list(Plan.objects.filter(cluster__name="demo").values("id", "state", "decided_by_policy"))
started = Counter()
batches = defaultdict(Counter)
for e in AuditEvent.objects.filter(
    action__in=["execution.started", "execution.batch_submitted"]
).values("action", "object_id", "after"):
    if e["action"] == "execution.started":
        started[e["object_id"]] += 1
    else:
        for move in (e["after"] or {}).get("moves", []):
            batches[e["object_id"]][move["partition"]] += 1
print(json.dumps({
    "plans": plans,
    "started": dict(started),
    "sent_twice": {p: [k for k, n in c.items() if n > 1] for p, c in batches.items()},
    "batches": sum(1 for _ in AuditEvent.objects.filter(action="execution.batch_submitted")),
    "resubmitted": PlanMove.objects.filter(submissions__gt=1).count(),
}))
"""


def policy_set(site: Site, **changes) -> None:
    site.shell(POLICY_CODE % repr(changes))


def skewed_topic(admin, name: str, partitions: int) -> None:
    """A topic whose replicas sit on brokers 1 and 2 only: work for the balancer."""
    from confluent_kafka.admin import NewTopic

    assignment = [[1, 2] if p % 2 == 0 else [2, 1] for p in range(partitions)]
    admin.create_topics([NewTopic(name, len(assignment), replica_assignment=assignment)])[
        name
    ].result(60)


@dataclass
class Chaos:
    """The chaos loop in a thread: kills, restarts, one Redis restart, one broker stop."""

    site: Site
    seconds: float
    seed: int
    origin: float
    admin: object
    say: callable = print
    kills: list[Kill] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    _thread: threading.Thread | None = None

    def now(self) -> float:
        return time.monotonic() - self.origin

    def start(self) -> Chaos:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def join(self) -> None:
        assert self._thread is not None
        self._thread.join()

    def _event(self, text: str) -> None:
        line = f"{self.now():7.1f} s  {text}"
        self.events.append(line)
        self.say(line)

    def _run(self) -> None:
        try:
            self._loop()
        except Exception as exc:  # reported, and the run fails
            self.errors.append(f"chaos loop: {exc!r}")

    def _loop(self) -> None:
        rng = random.Random(self.seed)
        redis_at = self.seconds * 0.35
        broker_at = self.seconds * 0.6
        redis_done = broker_done = False
        next_topic = SKEWED_TOPIC_EVERY
        broker: threading.Thread | None = None
        while self.now() < self.seconds:
            if self.now() >= next_topic:
                name = f"chaos-skew-{len(self.topics) + 1}"
                with contextlib.suppress(Exception):
                    skewed_topic(self.admin, name, 6)
                    self.topics.append(name)
                    self._event(f"topic {name} created on brokers 1, 2")
                next_topic += SKEWED_TOPIC_EVERY
            if not redis_done and self.now() >= redis_at:
                redis_done = True
                self._event("Redis stopped")
                self.site.run("scripts/dev-cluster", "redis-down", timeout=60)
                time.sleep(RESTART_AFTER)
                self.site.run("scripts/dev-cluster", "redis-up", timeout=120)
                self._event("Redis started")
            if not broker_done and self.now() >= broker_at:
                broker_done = True
                broker = threading.Thread(target=self._broker_bounce, daemon=True)
                broker.start()
            self._kill_one(rng.choice(VICTIMS))
            time.sleep(
                max(0.0, min(rng.uniform(20, 40) - RESTART_AFTER, self.seconds - self.now()))
            )
        if broker is not None:
            broker.join()

    def _kill_one(self, name: str) -> None:
        pid = self.site.pid(name)
        kill = Kill(at=self.now(), name=name, pid=pid)
        self.kills.append(kill)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
        self._event(f"SIGKILL {name} (pid {pid})")
        time.sleep(RESTART_AFTER)
        self.site.run("scripts/run", "--restart", name, timeout=120)
        kill.restarted_at = self.now()
        new = self.site.pid(name)
        if name.startswith("web"):
            port = self.site.port_of(name)
            deadline = time.monotonic() + 120
            while not healthy(port, timeout=2) and time.monotonic() < deadline:
                time.sleep(0.2)
            kill.ready_at = self.now()
        self._event(f"{name} restarted (pid {new})")

    def _broker_bounce(self) -> None:
        try:
            self._event("broker 3 stopping")
            self.site.run("scripts/dev-cluster", "stop-broker", "3", timeout=180)
            self._event("broker 3 stopped")
            time.sleep(30)
            self.site.run("scripts/dev-cluster", "start-broker", "3", timeout=300)
            self._event("broker 3 started")
        except Exception as exc:
            self.errors.append(f"broker bounce: {exc!r}")


@dataclass
class Figures:
    kills: list[Kill]
    events: list[str]
    acked: int
    read: int
    lost: int
    plans_made: int
    plans_auto_approved: int
    plans_ended: int
    plans_open: list[tuple[int, str]]
    executed_twice: list[int]
    sent_twice: dict[str, list[str]]
    batches: int
    resubmitted: int
    sync_gap: float
    syncs: int
    takeovers: list[float]
    requests: dict[int, int]
    failed_up: dict[int, list[tuple[float, str]]]
    failed_down: dict[int, int]
    errors: list[str]

    def failures(self) -> list[str]:
        """The pass conditions that do not hold."""
        out = list(self.errors)
        if self.lost or not self.acked:
            out.append(f"{self.lost} acked records lost (of {self.acked})")
        if not self.plans_made:
            out.append("no plan was made")
        if self.plans_open:
            out.append(f"plans that did not end: {self.plans_open}")
        if self.executed_twice:
            out.append(f"plans executed twice: {self.executed_twice}")
        if any(self.sent_twice.values()):
            out.append(f"reassignments sent twice: {self.sent_twice}")
        slow = [t for t in self.takeovers if t > SYNC_INTERVAL]
        if slow:
            out.append(f"a killed leading beat's entries resumed only after {slow} s")
        if self.sync_gap > 2 * SYNC_INTERVAL:
            out.append(f"a sync gap of {self.sync_gap:.1f} s (> {2 * SYNC_INTERVAL:g} s)")
        for port, failed in self.failed_up.items():
            if failed:
                out.append(
                    f"{len(failed)} reads failed on web :{port} while it was up: {failed[:3]}"
                )
        return out

    def lines(self) -> list[str]:
        out = ["kill schedule (s after the chaos began):"]
        for k in self.kills:
            ready = f", answering at {k.ready_at:.1f} s" if k.ready_at is not None else ""
            restarted = f"{k.restarted_at:.1f}" if k.restarted_at is not None else "-"
            out.append(
                f"  {k.at:7.1f} s  {k.name:<18} pid {k.pid}  restarted at {restarted} s{ready}"
            )
        out.append("other events:")
        out += [f"  {e}" for e in self.events if "SIGKILL" not in e and "restarted" not in e]
        out += [
            f"records (acks=all): acked {self.acked}, read back {self.read}, lost {self.lost}",
            f"plans: made {self.plans_made} (auto-approved {self.plans_auto_approved}), "
            f"ended {self.plans_ended}, not ended {len(self.plans_open)}, "
            f"executed twice {len(self.executed_twice)}",
            f"batches sent {self.batches}; reassignments sent twice "
            f"{sum(len(v) for v in self.sent_twice.values())}; moves sent again after a "
            f"crash (submissions > 1) {self.resubmitted}",
            f"syncs seen {self.syncs}; largest gap between two syncs {self.sync_gap:.1f} s "
            f"(limit 2 × {SYNC_INTERVAL:g} s = {2 * SYNC_INTERVAL:g} s)",
            f"leading beat killed {len(self.takeovers)} times; seconds from the kill to the "
            f"next entry sent: {[round(t, 1) for t in self.takeovers]} "
            f"(limit one sync interval, {SYNC_INTERVAL:g} s)",
        ]
        for port, count in sorted(self.requests.items()):
            out.append(
                f"reads on web :{port}: {count}, failed while it was up "
                f"{len(self.failed_up.get(port, []))}, failed while it was down or starting "
                f"{self.failed_down.get(port, 0)}"
            )
        out += [f"error: {e}" for e in self.errors]
        return out


# celery beat's log line for an entry it sends, with the time it was sent.
BEAT_SENT = re.compile(
    r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}): INFO/MainProcess\] "
    r"Scheduler: Sending due task",
    re.MULTILINE,
)


def beat_sends(site: Site) -> list[tuple[datetime, str]]:
    """Every entry either beat sent, in time order: (when, which beat)."""
    sends = []
    for name in ("beat", "beat-2"):
        log = site.workdir / "run" / "logs" / f"{name}.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        sends += [
            (datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S,%f"), name)
            for m in BEAT_SENT.finditer(text)
        ]
    return sorted(sends)


def beat_takeovers(kills: list[Kill], sends: list[tuple[datetime, str]]) -> list[float]:
    """For each kill of the beat that sent last (the leader): seconds until an entry was
    sent again, by the other beat or by the killed one started again."""
    out = []
    for k in kills:
        before = [name for when, name in sends if when < k.wall]
        if not k.name.startswith("beat") or not before or before[-1] != k.name:
            continue
        after = [when for when, _ in sends if when > k.wall]
        if after:
            out.append((after[0] - k.wall).total_seconds())
    return out


def _down_windows(site: Site, kills: list[Kill]) -> dict[int, list[tuple[float, float]]]:
    """Per web port, the spans from a request that its kill may cut (5 s before: the
    read timeout) until the restarted web answered."""
    windows: dict[int, list[tuple[float, float]]] = {}
    for k in kills:
        if k.name.startswith("web"):
            end = k.ready_at if k.ready_at is not None else float("inf")
            windows.setdefault(site.port_of(k.name), []).append((k.at - 5, end))
    return windows


def reads_split(
    requests: list[tuple[float, int, bool, str]], windows: dict[int, list[tuple[float, float]]]
) -> tuple[dict[int, int], dict[int, list[tuple[float, str]]], dict[int, int]]:
    """Reads per web port; the failed ones while that web was up (at, error); the failed
    ones within one of its `windows` (killed, restarting)."""
    count: dict[int, int] = {}
    failed_up: dict[int, list[tuple[float, str]]] = {}
    failed_down: dict[int, int] = {}
    for at, port, ok, error in requests:
        count[port] = count.get(port, 0) + 1
        if ok:
            continue
        if any(a <= at <= b for a, b in windows.get(port, [])):
            failed_down[port] = failed_down.get(port, 0) + 1
        else:
            failed_up.setdefault(port, []).append((round(at, 1), error))
    return count, failed_up, failed_down


def plans_ended_wait(site: Site, timeout: float) -> list[tuple[int, str]]:
    """Wait until no plan is approved or executing; those that still are."""
    deadline = time.monotonic() + timeout
    while True:
        data = json.loads(site.shell(FIGURES_CODE).strip().splitlines()[-1])
        active = [
            (p["id"], p["state"]) for p in data["plans"] if p["state"] in ("approved", "executing")
        ]
        if not active or time.monotonic() > deadline:
            return active
        time.sleep(5)


def chaos_run(
    site: Site, *, seconds: float, seed: int, plans_timeout: float = 900, say=print
) -> Figures:
    """Everything between a started site and its figures (the site is left running)."""
    from confluent_kafka.admin import AdminClient
    from devkit.live import consume_all
    from devkit.polling import wait_until
    from devkit.producer import AckedProducer

    bootstrap = site.bootstrap()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic, partitions = "chaos-acked", 8
    skewed_topic(admin, topic, partitions)
    policy_set(
        site,
        detection_enabled=True,
        detection_interval=20,
        goals=["replica-distribution"],
        auto_approve_max_bytes=10**12,
    )
    producer = AckedProducer(
        bootstrap=bootstrap,
        topic=topic,
        partitions=partitions,
        rate_per_partition=dict.fromkeys(range(partitions), 20.0),
    ).start()
    origin = time.monotonic()
    reads = ReadLoad(ports=(site.web_port, site.web_port + 1), origin=origin)
    syncs = SyncWatch(database=site.database, origin=origin)
    chaos = Chaos(site=site, seconds=seconds, seed=seed, origin=origin, admin=admin, say=say)
    try:
        wait_until(lambda: producer.acked_count, 120, what="the first acked record")
        reads.start()
        syncs.start()
        say(f"chaos for {seconds:g} s, seed {seed}")
        chaos.start().join()
        reads.stop()
        chaos_end = datetime.now(UTC).replace(tzinfo=None)
        syncs.stop()
        producer.stop()
        say("chaos over: detection off, waiting for every plan to end")
        policy_set(site, detection_enabled=False)
        open_plans = plans_ended_wait(site, plans_timeout)
    finally:
        reads.stop()
        syncs.stop()
        producer.stop()

    keys = consume_all(bootstrap, topic, partitions)
    read = {p: set(k.values()) for p, k in keys.items()}
    lost = sum(len(acked - read.get(p, set())) for p, acked in producer.acked.items())
    data = json.loads(site.shell(FIGURES_CODE).strip().splitlines()[-1])
    plans = data["plans"]

    requests, failed_up, failed_down = reads_split(reads.requests, _down_windows(site, chaos.kills))
    return Figures(
        kills=chaos.kills,
        events=chaos.events,
        acked=producer.acked_count,
        read=sum(len(k) for k in read.values()),
        lost=lost,
        plans_made=len(plans),
        plans_auto_approved=sum(1 for p in plans if p["decided_by_policy"]),
        plans_ended=sum(1 for p in plans if p["state"] in ENDED),
        plans_open=open_plans,
        executed_twice=[int(p) for p, n in data["started"].items() if n > 1],
        sent_twice={p: v for p, v in data["sent_twice"].items() if v},
        batches=data["batches"],
        resubmitted=data["resubmitted"],
        sync_gap=syncs.largest_gap(chaos_end) if syncs.syncs else float("inf"),
        syncs=len(syncs.syncs),
        takeovers=beat_takeovers(chaos.kills, beat_sends(site)),
        requests=requests,
        failed_up=failed_up,
        failed_down=failed_down,
        errors=chaos.errors + [f"producer: {e}" for e in producer.failed[:3]],
    )


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
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "balancer_site.settings")
    import django

    django.setup()
    print(machine_line("before"), flush=True)
    (REPO / ".run").mkdir(exist_ok=True)
    site = Site.make(Path(tempfile.mkdtemp(prefix="chaos-", dir=REPO / ".run")))
    print(f"site: {site.workdir}, webs :{site.web_port} :{site.web_port + 1}", flush=True)
    print("settings: " + " ".join(f"{k}={v}" for k, v in PRODUCT_SETTINGS.items()), flush=True)
    try:
        site.start()
        figures = chaos_run(
            site, seconds=args.seconds, seed=args.seed, say=lambda s: print(s, flush=True)
        )
    finally:
        left = site.stop()
        if not args.keep:
            shutil.rmtree(site.workdir, ignore_errors=True)
    print("\n".join(figures.lines()))
    if left:
        print("left running: " + "; ".join(left))
    print(machine_line("after"), flush=True)
    failures = figures.failures() + (["processes left running"] if left else [])
    for f in failures:
        print(f"FAIL: {f}")
    print("PASS" if not failures else "FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
