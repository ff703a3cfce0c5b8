"""Local real Apache Kafka (KRaft) dev cluster + Redis, for `make run` and the tests.

Layout: one KRaft controller (node 100) and three brokers (nodes 1, 2, 3, racks a/b/c),
each a plain `java ... kafka.Kafka node.properties` process started from the jars that
`scripts/fetch-kafka-jars` puts in `.cache/kafka/libs`. Everything a node writes lives in
`<run_dir>/<node id>/` (config, data, pid, log); run_dir defaults to `.run/kafka`.

Only the standard library and confluent_kafka (imported lazily, for metadata checks) are
used, so `down` still works from a bare python3.

CLI: python scripts/dev_cluster.py {up,down,status,stop-broker,start-broker,redis-up,
redis-down,bootstrap-servers}; see `--help`. Exit codes: 0 ok, 1 error, 2 bad usage/unknown id.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlparse

REPO_ROOT = Path(__file__).resolve().parent.parent
KAFKA_POM = REPO_ROOT / "scripts" / "kafka" / "pom.xml"
LOG4J2_CONFIG = REPO_ROOT / "scripts" / "kafka" / "log4j2.properties"
FETCH_JARS = REPO_ROOT / "scripts" / "fetch-kafka-jars"
LIBS_DIR = REPO_ROOT / ".cache" / "kafka" / "libs"
LIBS_STAMP = REPO_ROOT / ".cache" / "kafka" / "libs.sha256"

HOST = "127.0.0.1"
CONTROLLER_ID = 100
BROKER_RACKS: dict[int, str] = {1: "a", 2: "b", 3: "c"}
DEFAULT_BROKER_PORT_BASE = 29090  # broker N listens on base + N
DEFAULT_CONTROLLER_PORT = 29190
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
UP_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 30.0
LOG_ROTATE_BYTES = 20 * 1024 * 1024

# Small heaps: 4 JVMs share a 2-core / 24 GB box with Spark and the tests. SerialGC and
# C1-only JIT cut startup time and thread count; peak throughput doesn't matter here.
JVM_FLAGS = [
    "-Xms64m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:+ExitOnOutOfMemoryError",
    "-XX:-UsePerfData",
    "-Djava.awt.headless=true",
    "-Djava.net.preferIPv4Stack=true",
]
BROKER_HEAP = "-Xmx384m"
CONTROLLER_HEAP = "-Xmx256m"

# Settings shared by all nodes. Thread pools are shrunk for the 2-core machine.
COMMON_PROPS: dict[str, str] = {
    "controller.listener.names": "CONTROLLER",
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    "num.network.threads": "2",
    "num.io.threads": "2",
    "background.threads": "2",
    "num.recovery.threads.per.data.dir": "1",
}

# Controller-only settings. Topic-creation defaults are applied by the controller in KRaft
# (brokers warn that they ignore them from 5.0 on).
CONTROLLER_PROPS: dict[str, str] = {
    "num.partitions": "1",
    "default.replication.factor": "1",
    # The controller fences a broker that misses heartbeats this long: a SIGKILLed broker
    # leaves the metadata after ~6 s instead of the default 9 s.
    "broker.session.timeout.ms": "6000",
}

# Broker settings for tests: replicated internal topics (3 brokers), no surprise topics,
# fast group joins, quick fencing of a killed broker, small logs.
BROKER_PROPS: dict[str, str] = {
    "inter.broker.listener.name": "PLAINTEXT",
    "auto.create.topics.enable": "false",
    "offsets.topic.replication.factor": "3",
    "offsets.topic.num.partitions": "10",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "transaction.state.log.num.partitions": "10",
    "share.coordinator.state.topic.replication.factor": "3",
    "share.coordinator.state.topic.num.partitions": "10",
    "group.initial.rebalance.delay.ms": "0",
    # Frequent heartbeats so a broker is registered/unfenced quickly after a start.
    "broker.heartbeat.interval.ms": "500",
    "log.segment.bytes": str(16 * 1024 * 1024),
    "log.retention.hours": "24",
    "log.retention.check.interval.ms": "60000",
    # The cleaner's dedupe buffer is allocated on the heap (default 128 MB).
    "log.cleaner.dedupe.buffer.size": str(8 * 1024 * 1024),
    "log.cleaner.threads": "1",
    "replica.lag.time.max.ms": "10000",
}


class DevClusterError(Exception):
    """Something the user must fix (missing java/jars, a node that won't start, ...)."""


class UnknownNodeError(DevClusterError):
    """A broker id that is not part of the dev cluster (CLI exit code 2)."""


@dataclass(frozen=True)
class NodeSpec:
    node_id: int
    role: str  # "controller" or "broker"
    port: int
    rack: str | None


@dataclass
class NodeStatus:
    node_id: int
    role: str
    port: int
    rack: str | None
    pid: int | None
    running: bool
    in_metadata: bool | None  # None: not applicable (controller) or metadata unreachable


@dataclass
class RedisStatus:
    url: str
    answering: bool
    pid: int | None  # set only when this tool started it


# --------------------------------------------------------------------------- processes


def _read_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None


# Processes started by this Python process. Keeping the Popen objects avoids "subprocess
# is still running" ResourceWarnings when they'd otherwise be garbage collected.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def _reap(pid: int) -> None:
    # Nodes started by this Python process are our children: collect them once they exit
    # or they linger as zombies, which os.kill(pid, 0) still reports as alive.
    child = _CHILDREN.get(pid)
    if child is not None:
        if child.poll() is not None:
            del _CHILDREN[pid]
        return
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _alive(pid: int) -> bool:
    """True while any thread of pid is still running.

    A JVM that is shutting down can have a zombie main thread (and an empty cmdline) while
    its other threads still hold the ports and the data-dir lock, so look at every task.
    """
    _reap(pid)
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return False
    for task in tasks:
        try:
            state = (task / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            return True
    return False


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _pid_matches(pid: int, marker: str, settle: float = 30.0) -> bool:
    """True if pid is alive and its command line contains marker.

    The marker check keeps us from signalling an unrelated process that reused a stale pid.
    An empty cmdline means the process is mid-exec (Popen can return before the kernel has
    set up the new argv) or already exiting: wait until it shows a cmdline or is gone, so a
    half-dead node is never taken for stopped and started twice on the same ports.
    """
    deadline = time.monotonic() + settle
    while _alive(pid):
        cmdline = _cmdline(pid)
        if cmdline:
            return marker in cmdline
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return False


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def _wait_gone(pids: set[int], timeout: float) -> set[int]:
    """Wait until none of pids is alive; return the ones still alive."""
    deadline = time.monotonic() + timeout
    alive = set(pids)
    while alive and time.monotonic() < deadline:
        # Only existence matters here: identity was checked before the signal was sent.
        alive = {p for p in alive if _alive(p)}
        if alive:
            time.sleep(0.1)
    return alive


def _terminate(pids: set[int], kill: bool = False, timeout: float = STOP_TIMEOUT_S) -> None:
    """SIGTERM (or SIGKILL) the given processes, escalating to SIGKILL after timeout."""
    for pid in pids:
        _signal(pid, signal.SIGKILL if kill else signal.SIGTERM)
    left = _wait_gone(pids, timeout)
    if left:
        for pid in left:
            _signal(pid, signal.SIGKILL)
        left = _wait_gone(left, 10.0)
    if left:
        raise DevClusterError(f"processes {sorted(left)} did not exit after SIGKILL")


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _find_java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    java = shutil.which("java")
    if not java:
        raise DevClusterError(
            "java not found (need a JDK/JRE 17+ on PATH or JAVA_HOME); "
            "install it with: apt-get install -y openjdk-17-jre-headless"
        )
    return java


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _redis_ping(host: str, port: int, timeout: float = 1.0) -> bool:
    """True if something speaking the Redis protocol answers on host:port."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            reply = sock.recv(64)
    except OSError:
        return False
    # "-NOAUTH ..." is still a Redis server, just one with a password: reuse it too.
    return reply.startswith(b"+PONG") or reply.startswith(b"-NOAUTH")


# --------------------------------------------------------------------------- cluster


class DevCluster:
    """The local dev cluster. Cheap to construct; every method re-reads state from disk."""

    def __init__(
        self,
        run_dir: str | os.PathLike[str] | None = None,
        redis_dir: str | os.PathLike[str] | None = None,
        redis_url: str | None = None,
        broker_port_base: int | None = None,
        controller_port: int | None = None,
    ) -> None:
        env = os.environ
        self.run_dir = Path(
            run_dir or env.get("KAFKA_DEV_DIR") or REPO_ROOT / ".run" / "kafka"
        ).resolve()
        # Default: .run/redis beside .run/kafka. A custom run dir gets its own redis dir, so
        # `down` there never stops a Redis that the default cluster started.
        default_redis_dir = (
            REPO_ROOT / ".run" / "redis"
            if self.run_dir == (REPO_ROOT / ".run" / "kafka").resolve()
            else self.run_dir / "redis"
        )
        self.redis_dir = Path(redis_dir or env.get("REDIS_DEV_DIR") or default_redis_dir).resolve()
        self.redis_url = redis_url or env.get("REDIS_URL") or DEFAULT_REDIS_URL
        base = broker_port_base or int(
            env.get("KAFKA_DEV_BROKER_PORT_BASE", DEFAULT_BROKER_PORT_BASE)
        )
        self.controller_port = controller_port or int(
            env.get("KAFKA_DEV_CONTROLLER_PORT", DEFAULT_CONTROLLER_PORT)
        )
        self._lock_depth = 0
        self.nodes: dict[int, NodeSpec] = {
            CONTROLLER_ID: NodeSpec(CONTROLLER_ID, "controller", self.controller_port, None)
        }
        for broker_id, rack in BROKER_RACKS.items():
            self.nodes[broker_id] = NodeSpec(broker_id, "broker", base + broker_id, rack)

    # ---- addresses

    @property
    def broker_ids(self) -> list[int]:
        return [n.node_id for n in self.nodes.values() if n.role == "broker"]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{HOST}:{self.nodes[b].port}" for b in self.broker_ids)

    @property
    def redis_host_port(self) -> tuple[str, int]:
        parsed = urlparse(self.redis_url)
        return parsed.hostname or "127.0.0.1", parsed.port or 6379

    def node_dir(self, node_id: int) -> Path:
        return self.run_dir / str(node_id)

    def log_file(self, node_id: int) -> Path:
        return self.node_dir(node_id) / "server.log"

    def _pid_file(self, node_id: int) -> Path:
        return self.node_dir(node_id) / "kafka.pid"

    def _config_file(self, node_id: int) -> Path:
        return self.node_dir(node_id) / "node.properties"

    def _marker(self, node_id: int) -> str:
        # The absolute config path is unique per node and per run dir.
        return str(self._config_file(node_id))

    # ---- state

    def _check_broker_id(self, broker_id: int) -> NodeSpec:
        spec = self.nodes.get(broker_id)
        if spec is None or spec.role != "broker":
            known = ", ".join(map(str, self.broker_ids))
            raise UnknownNodeError(f"unknown broker id {broker_id} (brokers are {known})")
        return spec

    def node_pid(self, node_id: int) -> int | None:
        """Pid of the node if it is running (started by this tool), else None."""
        pid = _read_pid(self._pid_file(node_id))
        if pid is not None and _pid_matches(pid, self._marker(node_id)):
            return pid
        return None

    def running_nodes(self) -> set[int]:
        return {n for n in self.nodes if self.node_pid(n) is not None}

    def metadata_brokers(self, timeout: float = 3.0) -> set[int] | None:
        """Broker ids the cluster metadata lists, or None if no broker answers."""
        try:
            from confluent_kafka import KafkaException
            from confluent_kafka.admin import AdminClient
        except ImportError as exc:  # pragma: no cover - only with a bare python3
            raise DevClusterError(
                "confluent_kafka is not importable; run with .venv/bin/python"
            ) from exc
        # A fresh client each time: a cached one may keep reporting a broker we just stopped.
        admin = AdminClient(
            {
                "bootstrap.servers": self.bootstrap_servers,
                "socket.connection.setup.timeout.ms": 2000,
                "log_level": 0,  # connection-refused noise while nodes start/stop
                "error_cb": lambda _err: None,
            }
        )
        try:
            md = admin.list_topics(timeout=timeout)
        except KafkaException:
            return None
        return set(md.brokers)

    def status(self) -> list[NodeStatus]:
        running = {n: self.node_pid(n) for n in self.nodes}
        brokers_up = any(running[b] for b in self.broker_ids)
        seen = self.metadata_brokers() if brokers_up else None
        out = []
        for spec in self.nodes.values():
            in_md = None if spec.role == "controller" or seen is None else spec.node_id in seen
            pid = running[spec.node_id]
            out.append(
                NodeStatus(
                    spec.node_id, spec.role, spec.port, spec.rack, pid, pid is not None, in_md
                )
            )
        return out

    def redis_status(self) -> RedisStatus:
        host, port = self.redis_host_port
        pid = _read_pid(self.redis_dir / "redis.pid")
        if pid is not None and not _pid_matches(pid, "redis-server"):
            pid = None
        return RedisStatus(self.redis_url, _redis_ping(host, port), pid)

    # ---- lifecycle

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        # Serializes up/down/start/stop across processes (e.g. `make run` and a test run).
        # Re-entrant within one DevCluster so use() can call up() while holding it.
        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        with open(self.run_dir / ".lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            self._lock_depth = 1
            try:
                yield
            finally:
                self._lock_depth = 0
                fcntl.flock(fh, fcntl.LOCK_UN)

    def ensure_jars(self) -> None:
        want = hashlib.sha256(KAFKA_POM.read_bytes()).hexdigest()
        have = LIBS_STAMP.read_text().strip() if LIBS_STAMP.is_file() else ""
        if have == want and any(LIBS_DIR.glob("kafka_2.13-*.jar")):
            return
        result = subprocess.run([str(FETCH_JARS)], cwd=REPO_ROOT, check=False)
        if result.returncode != 0 or not any(LIBS_DIR.glob("kafka_2.13-*.jar")):
            raise DevClusterError(
                f"Kafka jars missing in {LIBS_DIR} and scripts/fetch-kafka-jars failed"
            )

    def _cluster_id(self) -> str:
        id_file = self.run_dir / "cluster.id"
        if id_file.is_file():
            return id_file.read_text().strip()
        # Kafka's Uuid format: url-safe base64 of 16 random bytes, without padding. Like
        # Kafka's own Uuid.randomUuid(), skip ids starting with "-": CLIs take them for flags.
        cluster_id = "-"
        while cluster_id.startswith("-"):
            cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        id_file.write_text(cluster_id + "\n")
        return cluster_id

    def _node_props(self, spec: NodeSpec) -> dict[str, str]:
        props = dict(COMMON_PROPS)
        props["node.id"] = str(spec.node_id)
        props["process.roles"] = spec.role
        # Static single voter: no dynamic-quorum bootstrapping needed, formats instantly.
        props["controller.quorum.voters"] = f"{CONTROLLER_ID}@{HOST}:{self.controller_port}"
        props["log.dirs"] = str(self.node_dir(spec.node_id) / "data")
        if spec.role == "controller":
            props.update(CONTROLLER_PROPS)
            props["listeners"] = f"CONTROLLER://{HOST}:{spec.port}"
        else:
            props.update(BROKER_PROPS)
            props["listeners"] = f"PLAINTEXT://{HOST}:{spec.port}"
            props["advertised.listeners"] = f"PLAINTEXT://{HOST}:{spec.port}"
            props["broker.rack"] = str(spec.rack)
        return props

    def _write_config(self, spec: NodeSpec) -> Path:
        node_dir = self.node_dir(spec.node_id)
        (node_dir / "data").mkdir(parents=True, exist_ok=True)
        lines = ["# Generated by scripts/dev_cluster.py on every start; edits are lost."]
        lines += [f"{k}={v}" for k, v in self._node_props(spec).items()]
        path = self._config_file(spec.node_id)
        path.write_text("\n".join(lines) + "\n")
        return path

    def _classpath(self) -> str:
        return str(LIBS_DIR / "*")

    def _format(self, node_ids: Iterable[int], java: str) -> None:
        """Format the storage of nodes never formatted before (in parallel: ~1 s each)."""
        todo = [n for n in node_ids if not (self.node_dir(n) / "data" / "meta.properties").exists()]
        if not todo:
            return
        cluster_id = self._cluster_id()
        procs = {}
        for node_id in todo:
            cmd = [
                java,
                "-Xmx128m",
                *JVM_FLAGS,
                f"-Dlog4j2.configurationFile={LOG4J2_CONFIG}",
                "-cp",
                self._classpath(),
                "kafka.tools.StorageTool",
                "format",
                "--config",
                str(self._config_file(node_id)),
                f"--cluster-id={cluster_id}",
                "--ignore-formatted",
            ]
            procs[node_id] = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        for node_id, proc in procs.items():
            out, _ = proc.communicate(timeout=120)
            if proc.returncode != 0:
                raise DevClusterError(
                    f"formatting storage of node {node_id} failed:\n{out.decode(errors='replace')}"
                )

    def _launch(self, node_id: int, java: str) -> None:
        spec = self.nodes[node_id]
        node_dir = self.node_dir(node_id)
        heap = CONTROLLER_HEAP if spec.role == "controller" else BROKER_HEAP
        cmd = [
            java,
            heap,
            *JVM_FLAGS,
            f"-Dlog4j2.configurationFile={LOG4J2_CONFIG}",
            f"-Dkafka.logs.dir={node_dir}",
            "-cp",
            self._classpath(),
            "kafka.Kafka",
            str(self._config_file(node_id)),
        ]
        log_file = self.log_file(node_id)
        # Appended to across restarts (the previous run's end is often what you want to read);
        # rotated once so frequent test restarts can't fill the disk.
        if log_file.exists() and log_file.stat().st_size > LOG_ROTATE_BYTES:
            log_file.replace(log_file.with_name(log_file.name + ".1"))
        with open(log_file, "ab") as log:
            log.write(f"\n===== starting node {node_id} at {time.ctime()} =====\n".encode())
            log.flush()
            # New session: Ctrl-C in the terminal that ran `up` must not kill the cluster.
            proc = subprocess.Popen(
                cmd,
                cwd=node_dir,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        _CHILDREN[proc.pid] = proc
        self._pid_file(node_id).write_text(f"{proc.pid}\n")

    def _start_nodes(self, node_ids: list[int]) -> None:
        if not node_ids:
            return
        java = _find_java()
        self.ensure_jars()
        # Fail loudly instead of letting a second cluster (another run dir) or some other
        # service make our JVM die on bind while metadata checks talk to the wrong cluster.
        busy = [self.nodes[n].port for n in node_ids if _port_open(HOST, self.nodes[n].port)]
        if busy:
            raise DevClusterError(
                f"port(s) {busy} already in use by a process this run dir "
                f"({self.run_dir}) did not start; stop it first"
            )
        for node_id in node_ids:
            self._write_config(self.nodes[node_id])
        self._format(node_ids, java)
        for node_id in node_ids:
            self._launch(node_id, java)

    def wait_for_brokers(
        self, expected: set[int], timeout: float = UP_TIMEOUT_S, exact: bool = False
    ) -> set[int]:
        """Wait until metadata lists all of expected (exactly expected if exact=True)."""
        deadline = time.monotonic() + timeout
        seen: set[int] | None = None
        while True:
            dead = [
                n
                for n in self.nodes
                if n in expected | {CONTROLLER_ID} and self.node_pid(n) is None
            ]
            if dead:
                node = dead[0]
                raise DevClusterError(
                    f"node {node} is not running; last lines of {self.log_file(node)}:\n"
                    + _tail(self.log_file(node))
                )
            seen = self.metadata_brokers(timeout=2.0)
            if seen is not None and (seen == expected if exact else expected <= seen):
                return seen
            if time.monotonic() > deadline:
                raise DevClusterError(
                    f"timed out after {timeout:.0f}s waiting for brokers {sorted(expected)} "
                    f"in metadata (seen: {sorted(seen) if seen is not None else 'none'}); "
                    f"logs under {self.run_dir}"
                )
            time.sleep(0.3)

    def up(self, redis: bool = True, timeout: float = UP_TIMEOUT_S) -> None:
        """Start whatever is not running yet and wait until all brokers are in metadata."""
        with self._lock():
            missing = [n for n in self.nodes if self.node_pid(n) is None]
            self._start_nodes(missing)
            self.wait_for_brokers(set(self.broker_ids), timeout)
        if redis:
            self.redis_up()

    def down(self, redis: bool = True, timeout: float = STOP_TIMEOUT_S) -> None:
        """Stop the nodes (and Redis) this tool started; brokers first, controller last."""
        with self._lock():
            # All brokers at once (each does its own controlled shutdown), then the controller,
            # which the brokers need for that.
            brokers = {p for b in self.broker_ids if (p := self.node_pid(b)) is not None}
            _terminate(brokers, timeout=timeout)
            ctrl = self.node_pid(CONTROLLER_ID)
            if ctrl is not None:
                _terminate({ctrl}, timeout=timeout)
            for node_id in self.nodes:
                self._pid_file(node_id).unlink(missing_ok=True)
        if redis:
            self.redis_down()

    def stop_broker(
        self, broker_id: int, kill: bool = False, timeout: float = STOP_TIMEOUT_S
    ) -> None:
        """Stop one broker (SIGTERM = controlled shutdown, kill=True: SIGKILL) and wait."""
        self._check_broker_id(broker_id)
        with self._lock():
            pid = self.node_pid(broker_id)
            if pid is not None:
                _terminate({pid}, kill=kill, timeout=timeout)
            self._pid_file(broker_id).unlink(missing_ok=True)

    def start_broker(self, broker_id: int, timeout: float = UP_TIMEOUT_S) -> None:
        """Start one broker (no-op if running) and wait until metadata lists it again."""
        self._check_broker_id(broker_id)
        with self._lock():
            if self.node_pid(broker_id) is None:
                if self.node_pid(CONTROLLER_ID) is None:
                    raise DevClusterError("the controller is not running; run `up` first")
                self._start_nodes([broker_id])
            self.wait_for_brokers({broker_id}, timeout)

    # ---- shared use (test sessions)

    def _lease_dir(self) -> Path:
        return self.run_dir / "leases"

    def _live_leases(self, kind: str) -> list[int]:
        pids = []
        for path in self._lease_dir().glob(f"{kind}-*"):
            pid = int(path.name.rsplit("-", 1)[1])
            if _alive(pid):
                pids.append(pid)
            else:  # a crashed session: its lease no longer counts
                path.unlink(missing_ok=True)
        return pids

    def forget_auto_started(self, kinds: Iterable[str] = ("kafka", "redis")) -> None:
        """Mark Kafka/Redis as wanted by a person (CLI up/down): use() will not stop them."""
        for kind in kinds:
            (self._lease_dir() / f"{kind}.auto-started").unlink(missing_ok=True)

    @contextlib.contextmanager
    def use(
        self, kafka: bool = True, redis: bool = False, timeout: float = UP_TIMEOUT_S
    ) -> Iterator[DevCluster]:
        """Make sure the cluster (and/or Redis) is up inside the block; leave it as found.

        Several users (e.g. two pytest sessions in one tree) may share it: each holds a
        lease file, and the last one out stops only what a use() block started. A cluster
        that was already running (`make run`, `dev-cluster up`) is never stopped.
        """
        kinds = [k for k, wanted in (("kafka", kafka), ("redis", redis)) if wanted]
        leases = self._lease_dir()
        with self._lock():
            leases.mkdir(parents=True, exist_ok=True)
            if kafka:
                if not self.running_nodes():
                    (leases / "kafka.auto-started").touch()
                self.up(redis=False, timeout=timeout)
            if redis:
                host, port = self.redis_host_port
                if not _redis_ping(host, port):
                    self.redis_up()
                    if self.redis_status().pid is not None:
                        (leases / "redis.auto-started").touch()
            for kind in kinds:
                (leases / f"{kind}-{os.getpid()}").touch()
        try:
            yield self
        finally:
            with self._lock():
                for kind in kinds:
                    (leases / f"{kind}-{os.getpid()}").unlink(missing_ok=True)
                    flag = leases / f"{kind}.auto-started"
                    if flag.exists() and not self._live_leases(kind):
                        flag.unlink()
                        if kind == "kafka":
                            self.down(redis=False)
                        else:
                            self.redis_down()

    # ---- redis

    def redis_up(self, timeout: float = 15.0) -> str:
        """Make sure Redis answers at redis_url (reusing any server there); return the url."""
        host, port = self.redis_host_port
        if _redis_ping(host, port):
            return self.redis_url
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise DevClusterError(f"no Redis answers at {self.redis_url} (not local: won't start)")
        server = shutil.which("redis-server") or self._install_redis()
        if _redis_ping(host, port):  # the Debian package may have started its own service
            return self.redis_url
        self.redis_dir.mkdir(parents=True, exist_ok=True)
        cmd = [
            server,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--daemonize",
            "no",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.redis_dir),
        ]
        with open(self.redis_dir / "redis.log", "ab") as log:
            proc = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        _CHILDREN[proc.pid] = proc
        (self.redis_dir / "redis.pid").write_text(f"{proc.pid}\n")
        deadline = time.monotonic() + timeout
        while not _redis_ping(host, port):
            if proc.poll() is not None or time.monotonic() > deadline:
                if proc.poll() is None:
                    _terminate({proc.pid}, timeout=5.0)
                raise DevClusterError(
                    f"redis-server did not come up on port {port}:\n"
                    + _tail(self.redis_dir / "redis.log")
                )
            time.sleep(0.1)
        return self.redis_url

    def _install_redis(self) -> str:
        install = "apt-get update && apt-get install -y redis-server"
        if os.geteuid() != 0:
            raise DevClusterError(
                f"redis-server not found; install it with: sudo sh -c '{install}'"
            )
        print(f"dev-cluster: redis-server not found, running: {install}", file=sys.stderr)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        result = subprocess.run(
            ["sh", "-c", install], env=env, check=False, stdout=sys.stderr, stderr=sys.stderr
        )
        server = shutil.which("redis-server") or (
            "/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None
        )
        if result.returncode != 0 or server is None:
            raise DevClusterError(f"installing redis-server failed; try by hand: {install}")
        return server

    def redis_down(self, timeout: float = 10.0) -> None:
        """Stop Redis only if this tool started it."""
        pid_file = self.redis_dir / "redis.pid"
        pid = _read_pid(pid_file)
        if pid is not None and _pid_matches(pid, "redis-server"):
            _terminate({pid}, timeout=timeout)
        pid_file.unlink(missing_ok=True)


# --------------------------------------------------------------------------- CLI


def _print_status(cluster: DevCluster, as_json: bool) -> None:
    nodes = cluster.status()
    redis = cluster.redis_status()
    if as_json:
        print(
            json.dumps(
                {
                    "bootstrap_servers": cluster.bootstrap_servers,
                    "run_dir": str(cluster.run_dir),
                    "nodes": [asdict(n) for n in nodes],
                    "redis": asdict(redis),
                },
                indent=2,
            )
        )
        return
    print(f"run dir: {cluster.run_dir}   bootstrap: {cluster.bootstrap_servers}")
    print(f"{'id':>4}  {'role':<10}  {'port':>5}  {'rack':<4}  {'pid':>7}  {'state':<8}  metadata")
    for n in nodes:
        md = {None: "-", True: "yes", False: "no"}[n.in_metadata]
        print(
            f"{n.node_id:>4}  {n.role:<10}  {n.port:>5}  {n.rack or '-':<4}  "
            f"{n.pid or '-':>7}  {'running' if n.running else 'stopped':<8}  {md}"
        )
    owner = f"pid {redis.pid}" if redis.pid else "not started by dev-cluster"
    print(f"redis {redis.url}: {'answering' if redis.answering else 'down'} ({owner})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dev-cluster", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_up = sub.add_parser("up", help="start controller + 3 brokers (+ Redis) and wait")
    p_up.add_argument("--no-redis", action="store_true", help="don't touch Redis")
    p_up.add_argument("--timeout", type=float, default=UP_TIMEOUT_S)
    p_down = sub.add_parser("down", help="stop the nodes (and Redis) this tool started")
    p_down.add_argument("--no-redis", action="store_true", help="leave Redis running")
    p_status = sub.add_parser("status", help="show nodes, pids and metadata view")
    p_status.add_argument("--json", action="store_true")
    p_stop = sub.add_parser("stop-broker", help="stop one broker (controlled shutdown)")
    p_stop.add_argument("broker_id", type=int)
    p_stop.add_argument("--kill", action="store_true", help="SIGKILL instead of SIGTERM")
    p_start = sub.add_parser("start-broker", help="start one broker and wait for it")
    p_start.add_argument("broker_id", type=int)
    sub.add_parser("redis-up", help="ensure Redis answers (start it if needed)")
    sub.add_parser("redis-down", help="stop Redis if this tool started it")
    sub.add_parser("bootstrap-servers", help="print the bootstrap servers string")
    args = parser.parse_args(argv)

    cluster = DevCluster()
    try:
        if args.cmd in ("up", "down", "redis-up", "redis-down"):
            # A person asked for this state: test sessions must not undo it on exit.
            # Only for what the command touches: `up --no-redis` leaves Redis's mark alone.
            touches_redis = not getattr(args, "no_redis", False)
            kinds = {"redis"} if args.cmd.startswith("redis") else {"kafka"}
            cluster.forget_auto_started(kinds | ({"redis"} if touches_redis else set()))
        if args.cmd == "up":
            started = time.monotonic()
            cluster.up(redis=not args.no_redis, timeout=args.timeout)
            print(
                f"dev-cluster: up in {time.monotonic() - started:.1f}s; "
                f"bootstrap servers {cluster.bootstrap_servers}"
            )
        elif args.cmd == "down":
            cluster.down(redis=not args.no_redis)
            print("dev-cluster: down")
        elif args.cmd == "status":
            _print_status(cluster, args.json)
        elif args.cmd == "stop-broker":
            cluster.stop_broker(args.broker_id, kill=args.kill)
            print(f"dev-cluster: broker {args.broker_id} stopped")
        elif args.cmd == "start-broker":
            cluster.start_broker(args.broker_id)
            print(f"dev-cluster: broker {args.broker_id} running and in metadata")
        elif args.cmd == "redis-up":
            print(f"dev-cluster: redis answering at {cluster.redis_up()}")
        elif args.cmd == "redis-down":
            cluster.redis_down()
            print("dev-cluster: redis stopped (if dev-cluster had started it)")
        elif args.cmd == "bootstrap-servers":
            print(cluster.bootstrap_servers)
    except UnknownNodeError as exc:
        print(f"dev-cluster: error: {exc}", file=sys.stderr)
        return 2
    except DevClusterError as exc:
        print(f"dev-cluster: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
