"""The DevCluster: the nodes' lifecycle (up, down, stop/start one broker) and their state.

It composes the other modules: topology (which nodes), node_config + listeners (their
properties), storage and launcher (format, start), processes (pids, signals), metadata
(what Kafka reports), redis_server and leases. Cheap to construct; every method re-reads
state from disk.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import metadata
from .errors import DevClusterError, UnknownNodeError
from .jars import jars_ensure
from .jvm import CONTROLLER_HEAP, broker_heap_auto, heap_flag
from .launcher import node_launch
from .leaders import ElectionResult, preferred_leaders_elect
from .leases import auto_started_forget, cluster_use
from .listeners import PROFILES, ListenerProfile
from .locking import RunDirLock
from .node_config import config_write, node_data_dirs, node_props
from .options import options_check_change, options_load, options_resolve, options_save
from .paths import DEFAULT_REDIS_DIR, DEFAULT_RUN_DIR
from .processes import (
    STOP_TIMEOUT_S,
    find_java,
    pid_matches,
    port_open,
    read_pid,
    tail,
    terminate,
)
from .redis_server import DEFAULT_REDIS_URL, RedisServer, RedisStatus
from .storage import storage_format
from .strays import stray_dirs_remove
from .topology import (
    DEFAULT_BROKER_PORT_BASE,
    DEFAULT_CONTROLLER_PORT,
    HOST,
    NodeSpec,
    topology_nodes,
)
from .versions import KAFKA_VERSIONS, KafkaVersion

# A broker restarted from 5k+ replicas needs a while to load its logs on a busy machine.
UP_TIMEOUT_S = 180.0
# broker.session.timeout.ms (6 s) plus time for the controller to act on it.
FENCE_WAIT_S = 20.0


@dataclass
class NodeStatus:
    node_id: int
    role: str
    port: int
    rack: str | None
    pid: int | None
    running: bool
    in_metadata: bool | None  # None: not applicable (controller) or metadata unreachable


class DevCluster:
    """The local dev cluster. Cheap to construct; every method re-reads state from disk."""

    def __init__(
        self,
        run_dir: str | os.PathLike[str] | None = None,
        redis_dir: str | os.PathLike[str] | None = None,
        redis_url: str | None = None,
        broker_port_base: int | None = None,
        controller_port: int | None = None,
        profile: str | None = None,
        controllers: int | None = None,
        broker_heap: str | None = None,
        kafka_version: str | None = None,
        partitions_hint: int | None = None,
        log_dirs: int | None = None,
    ) -> None:
        env = os.environ
        self.run_dir = Path(run_dir or env.get("KAFKA_DEV_DIR") or DEFAULT_RUN_DIR).resolve()
        # Default: .run/redis beside .run/kafka. A custom run dir gets its own redis dir, so
        # `down` there never stops a Redis that the default cluster started.
        default_redis_dir = (
            DEFAULT_REDIS_DIR
            if self.run_dir == DEFAULT_RUN_DIR.resolve()
            else self.run_dir / "redis"
        )
        self.redis = RedisServer(
            redis_url or env.get("REDIS_URL") or DEFAULT_REDIS_URL,
            Path(redis_dir or env.get("REDIS_DEV_DIR") or default_redis_dir).resolve(),
        )
        base = broker_port_base or int(
            env.get("KAFKA_DEV_BROKER_PORT_BASE", DEFAULT_BROKER_PORT_BASE)
        )
        self.controller_port = controller_port or int(
            env.get("KAFKA_DEV_CONTROLLER_PORT", DEFAULT_CONTROLLER_PORT)
        )
        # Options not given here are the ones the run dir's cluster was started with.
        self.options = options_resolve(
            self.run_dir,
            profile=profile,
            controllers=controllers,
            broker_heap=broker_heap or env.get("KAFKA_DEV_BROKER_HEAP") or None,
            kafka_version=kafka_version,
            partitions_hint=partitions_hint,
            log_dirs=log_dirs,
        )
        self.kafka: KafkaVersion = KAFKA_VERSIONS[self.options.kafka_version]
        self.profile: ListenerProfile = PROFILES[self.options.profile]
        self.lock = RunDirLock(self.run_dir)
        # Bytes of stray replicas deleted per broker by the last start (strays.py).
        self.strays_freed: dict[int, int] = {}
        self.nodes: dict[int, NodeSpec] = topology_nodes(
            broker_port_base=base,
            controller_port=self.controller_port,
            controllers=self.options.controllers,
        )

    # ---- addresses

    @property
    def broker_ids(self) -> list[int]:
        return [n.node_id for n in self.nodes.values() if n.role == "broker"]

    @property
    def controller_ids(self) -> list[int]:
        return [n.node_id for n in self.nodes.values() if n.role == "controller"]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{HOST}:{self.nodes[b].port}" for b in self.broker_ids)

    @property
    def quorum_voters(self) -> str:
        return ",".join(f"{c}@{HOST}:{self.nodes[c].port}" for c in self.controller_ids)

    @property
    def redis_url(self) -> str:
        return self.redis.url

    @property
    def redis_dir(self) -> Path:
        return self.redis.redis_dir

    @property
    def redis_host_port(self) -> tuple[str, int]:
        return self.redis.host_port

    @property
    def lease_dir(self) -> Path:
        return self.run_dir / "leases"

    def node_dir(self, node_id: int) -> Path:
        return self.run_dir / str(node_id)

    def data_dirs(self, node_id: int) -> list[Path]:
        """The node's log dirs: a broker has `--log-dirs` of them, a controller one."""
        count = self.options.log_dirs if self.nodes[node_id].role == "broker" else 1
        return node_data_dirs(self.node_dir(node_id), count=count)

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

    def _check_node_id(self, node_id: int, role: str) -> NodeSpec:
        spec = self.nodes.get(node_id)
        if spec is None or spec.role != role:
            ids = self.broker_ids if role == "broker" else self.controller_ids
            known = ", ".join(map(str, ids))
            raise UnknownNodeError(f"unknown {role} id {node_id} ({role}s are {known})")
        return spec

    def _check_broker_id(self, broker_id: int) -> NodeSpec:
        return self._check_node_id(broker_id, "broker")

    def node_pid(self, node_id: int) -> int | None:
        """Pid of the node if it is running (started by this tool), else None."""
        pid = read_pid(self._pid_file(node_id))
        if pid is not None and pid_matches(pid, self._marker(node_id)):
            return pid
        return None

    def running_nodes(self) -> set[int]:
        return {n for n in self.nodes if self.node_pid(n) is not None}

    def running_controllers(self) -> set[int]:
        return {c for c in self.controller_ids if self.node_pid(c) is not None}

    def active_controller(self, timeout: float = 5.0) -> int | None:
        """Id of the quorum leader (the active controller), or None while there is none."""
        return metadata.quorum_leader(self.bootstrap_servers, timeout=timeout)

    def wait_for_active_controller(
        self, timeout: float = UP_TIMEOUT_S, not_in: Iterable[int] = ()
    ) -> int:
        """Wait until the quorum has a leader that is not one of not_in; return its id."""
        excluded = set(not_in)
        deadline = time.monotonic() + timeout
        while True:
            leader = self.active_controller(timeout=3.0)
            if leader is not None and leader not in excluded:
                return leader
            if time.monotonic() > deadline:
                raise DevClusterError(
                    f"timed out after {timeout:.0f}s waiting for an active controller "
                    f"(other than {sorted(excluded)}); logs under {self.run_dir}"
                )
            time.sleep(0.3)

    def metadata_brokers(self, timeout: float = 3.0) -> set[int] | None:
        """Broker ids the cluster metadata lists, or None if no broker answers."""
        return metadata.metadata_brokers(self.bootstrap_servers, timeout=timeout)

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
        return self.redis.status()

    # ---- lifecycle

    def _lock(self) -> AbstractContextManager[None]:
        return self.lock.held()

    def ensure_jars(self) -> None:
        jars_ensure(self.kafka)

    def _write_config(self, spec: NodeSpec) -> Path:
        props = node_props(
            spec,
            node_dir=self.node_dir(spec.node_id),
            log_dirs=self.options.log_dirs,
            quorum_voters=self.quorum_voters,
            profile=self.profile,
            run_dir=self.run_dir,
            kafka=self.kafka,
        )
        return config_write(self._config_file(spec.node_id), props)

    def replicas_held(self, broker_id: int) -> int:
        """Partition replicas in the broker's log dirs (`<topic>-<partition>` directories)."""
        return sum(
            1
            for data in self.data_dirs(broker_id)
            if data.is_dir()
            for d in data.iterdir()
            if d.is_dir()
            and d.name.rpartition("-")[2].isdigit()
            and not d.name.startswith("__cluster_metadata")
        )

    def heap(self, node_id: int) -> str:
        """The -Xmx the node starts with: fixed for controllers; for brokers the option
        (--broker-heap, KAFKA_DEV_BROKER_HEAP) or else sized to the replicas it holds, or
        to --partitions-hint when that is more (as if each broker held a replica of all)."""
        if self.nodes[node_id].role == "controller":
            return CONTROLLER_HEAP
        if self.options.broker_heap:
            return heap_flag(self.options.broker_heap)
        held = self.replicas_held(node_id)
        return broker_heap_auto(max(held, self.options.partitions_hint or 0))

    def _launch(self, node_id: int, java: str) -> None:
        pid = node_launch(
            java=java,
            kafka=self.kafka,
            heap=self.heap(node_id),
            node_dir=self.node_dir(node_id),
            config=self._config_file(node_id),
            log_file=self.log_file(node_id),
        )
        self._pid_file(node_id).write_text(f"{pid}\n")

    def _wait_fenced(self, broker_ids: list[int], timeout: float = FENCE_WAIT_S) -> None:
        """Wait until metadata no longer lists these (not running) brokers.

        A SIGKILLed broker stays listed until the controller fences it; started again
        before that, wait_for_brokers would take the dead incarnation for the new one.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            seen = self.metadata_brokers(timeout=2.0)
            if seen is None or not seen & set(broker_ids):
                return
            time.sleep(0.3)

    def _strays_remove(self, broker_ids: list[int]) -> None:
        """Delete the replicas these (stopped) brokers keep that Kafka would never read
        again (strays.py); the assignment comes from a running broker, if one answers."""
        if not broker_ids:
            return
        assignment = None
        if any(self.node_pid(b) is not None for b in self.broker_ids):
            assignment = metadata.replica_assignment(
                self.bootstrap_servers, self.admin_security(), timeout=5.0
            )
        self.strays_freed = {
            b: sum(
                stray_dirs_remove(data, broker_id=b, assignment=assignment)
                for data in self.data_dirs(b)
            )
            for b in broker_ids
        }

    def _start_nodes(self, node_ids: list[int]) -> None:
        if not node_ids:
            return
        java = find_java()
        self.ensure_jars()
        # Fail loudly instead of letting a second cluster (another run dir) or some other
        # service make our JVM die on bind while metadata checks talk to the wrong cluster.
        busy = [self.nodes[n].port for n in node_ids if port_open(HOST, self.nodes[n].port)]
        if busy:
            raise DevClusterError(
                f"port(s) {busy} already in use by a process this run dir "
                f"({self.run_dir}) did not start; stop it first"
            )
        self._wait_fenced([n for n in node_ids if self.nodes[n].role == "broker"])
        self._strays_remove([n for n in node_ids if self.nodes[n].role == "broker"])
        self.profile.prepare(self.run_dir)
        for node_id in node_ids:
            self._write_config(self.nodes[node_id])
        storage_format(
            java=java,
            kafka=self.kafka,
            run_dir=self.run_dir,
            configs={n: self._config_file(n) for n in node_ids},
            data_dirs={n: self.data_dirs(n) for n in node_ids},
            extra_args=self.profile.format_args(self.run_dir),
        )
        for node_id in node_ids:
            self._launch(node_id, java)

    def wait_for_brokers(
        self, expected: set[int], timeout: float = UP_TIMEOUT_S, exact: bool = False
    ) -> set[int]:
        """Wait until metadata lists all of expected (exactly expected if exact=True).

        Metadata lists only unfenced brokers, so a started broker is listed once it has
        loaded its logs and the controller let it in.
        """
        deadline = time.monotonic() + timeout
        seen: set[int] | None = None
        while True:
            dead = [n for n in self.nodes if n in expected and self.node_pid(n) is None]
            if not self.running_controllers():
                dead = dead or self.controller_ids
            if dead:
                node = dead[0]
                raise DevClusterError(
                    f"node {node} is not running; last lines of {self.log_file(node)}:\n"
                    + tail(self.log_file(node))
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

    def _options_record(self) -> None:
        """Record this object's options for later commands, if they may apply to the run dir."""
        if options_load(self.run_dir) == self.options:
            return
        options_check_change(
            self.run_dir,
            self.options,
            formatted=(self.run_dir / "cluster.id").is_file(),
            running=self._any_node_running(),
        )
        options_save(self.run_dir, self.options)

    def _any_node_running(self) -> bool:
        """True if any node of the run dir runs, whatever topology it was started with."""
        return any(
            pid_matches(pid, str(pid_file.parent / "node.properties"))
            for pid_file in self.run_dir.glob("*/kafka.pid")
            if (pid := read_pid(pid_file)) is not None
        )

    def admin_security(self) -> dict[str, Any]:
        """librdkafka settings of a principal that may see and elect every partition
        (none: PLAINTEXT, no ACLs); a profile with ACLs overrides it."""
        return {}

    def elect_preferred_leaders(self, timeout: float = UP_TIMEOUT_S) -> ElectionResult:
        """Hand each partition back to its preferred replica where that broker runs."""
        running = {b for b in self.broker_ids if self.node_pid(b) is not None}
        return preferred_leaders_elect(
            self.bootstrap_servers, running, timeout=timeout, security=self.admin_security()
        )

    def up(self, redis: bool = True, timeout: float = UP_TIMEOUT_S) -> ElectionResult | None:
        """Start whatever is not running yet and wait until all brokers are in metadata.

        If it started a broker, it then elects preferred leaders (returns how many): brokers
        restarted from existing data would otherwise leave one of them leading everything.
        """
        election = None
        with self._lock():
            self._options_record()
            missing = [n for n in self.nodes if self.node_pid(n) is None]
            self._start_nodes(missing)
            self.wait_for_brokers(set(self.broker_ids), timeout)
            if set(missing) & set(self.broker_ids):
                election = self.elect_preferred_leaders(timeout)
        if redis:
            self.redis_up()
        return election

    def down(self, redis: bool = True, timeout: float = STOP_TIMEOUT_S) -> None:
        """Stop the nodes (and Redis) this tool started; brokers first, controllers last."""
        with self._lock():
            # All brokers at once (each does its own controlled shutdown), then the
            # controllers, which the brokers need for that.
            brokers = {p for b in self.broker_ids if (p := self.node_pid(b)) is not None}
            terminate(brokers, timeout=timeout)
            ctrls = {p for c in self.controller_ids if (p := self.node_pid(c)) is not None}
            if ctrls:
                terminate(ctrls, timeout=timeout)
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
                terminate({pid}, kill=kill, timeout=timeout)
            self._pid_file(broker_id).unlink(missing_ok=True)

    def start_broker(self, broker_id: int, timeout: float = UP_TIMEOUT_S) -> ElectionResult | None:
        """Start one broker (no-op if running) and wait until metadata lists it again.

        If it started the broker, it then elects preferred leaders (see up()).
        """
        self._check_broker_id(broker_id)
        with self._lock():
            if self.node_pid(broker_id) is not None:
                self.wait_for_brokers({broker_id}, timeout)
                return None
            if not self.running_controllers():
                raise DevClusterError("no controller is running; run `up` first")
            self._start_nodes([broker_id])
            self.wait_for_brokers({broker_id}, timeout)
            return self.elect_preferred_leaders(timeout)

    def stop_controller(
        self, controller_id: int, kill: bool = False, timeout: float = STOP_TIMEOUT_S
    ) -> None:
        """Stop one controller (SIGTERM: it resigns leadership; kill=True: SIGKILL)."""
        self._check_node_id(controller_id, "controller")
        with self._lock():
            pid = self.node_pid(controller_id)
            if pid is not None:
                terminate({pid}, kill=kill, timeout=timeout)
            self._pid_file(controller_id).unlink(missing_ok=True)

    def start_controller(self, controller_id: int, timeout: float = UP_TIMEOUT_S) -> None:
        """Start one controller (no-op if running) and wait until the quorum has a leader."""
        self._check_node_id(controller_id, "controller")
        with self._lock():
            if self.node_pid(controller_id) is None:
                self._start_nodes([controller_id])
            deadline = time.monotonic() + timeout
            while controller_id not in metadata.quorum_voters_caught_up(
                self.bootstrap_servers, timeout=3.0
            ):
                if self.node_pid(controller_id) is None:
                    raise DevClusterError(
                        f"controller {controller_id} died; last lines of its log:\n"
                        + tail(self.log_file(controller_id))
                    )
                if time.monotonic() > deadline:
                    raise DevClusterError(
                        f"timed out after {timeout:.0f}s waiting for controller "
                        f"{controller_id} to catch up with the quorum"
                    )
                time.sleep(0.3)

    # ---- shared use (test sessions)

    def forget_auto_started(self, kinds: Iterable[str] = ("kafka", "redis")) -> None:
        """Mark Kafka/Redis as wanted by a person (CLI up/down): use() will not stop them."""
        auto_started_forget(self.lease_dir, kinds)

    def use(
        self, kafka: bool = True, redis: bool = False, timeout: float = UP_TIMEOUT_S
    ) -> AbstractContextManager[DevCluster]:
        """Make sure the cluster (and/or Redis) is up inside the block; leave it as found.

        Several users (e.g. two pytest sessions in one tree) may share it: each holds a
        lease file, and the last one out stops only what a use() block started. A cluster
        that was already running (`make run`, `dev-cluster up`) is never stopped.
        """
        return cluster_use(self, kafka=kafka, redis=redis, timeout=timeout)

    # ---- redis

    def redis_up(self, timeout: float = 15.0) -> str:
        """Make sure Redis answers at redis_url (reusing any server there); return the url."""
        return self.redis.up(timeout=timeout)

    def redis_down(self, timeout: float = 10.0) -> None:
        """Stop Redis only if this tool started it."""
        self.redis.down(timeout=timeout)
