"""KRaft storage: the cluster id and formatting each node's log dir before its first start."""

from __future__ import annotations

import base64
import subprocess
import uuid
from pathlib import Path

from .errors import DevClusterError
from .jvm import TOOL_HEAP, java_command
from .versions import KafkaVersion


def cluster_id_ensure(run_dir: Path) -> str:
    """The run dir's cluster id, created on first use."""
    id_file = run_dir / "cluster.id"
    if id_file.is_file():
        return id_file.read_text().strip()
    # Kafka's Uuid format: url-safe base64 of 16 random bytes, without padding. Like
    # Kafka's own Uuid.randomUuid(), skip ids starting with "-": CLIs take them for flags.
    cluster_id = "-"
    while cluster_id.startswith("-"):
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    id_file.write_text(cluster_id + "\n")
    return cluster_id


def storage_format(
    *,
    java: str,
    kafka: KafkaVersion,
    run_dir: Path,
    configs: dict[int, Path],
    data_dirs: dict[int, list[Path]],
    extra_args: list[str],
) -> None:
    """Format the storage of nodes with a log dir never formatted before (in parallel:
    each is a JVM start; --ignore-formatted leaves the formatted dirs alone)."""
    todo = {
        node_id: config
        for node_id, config in configs.items()
        if not all((d / "meta.properties").exists() for d in data_dirs[node_id])
    }
    if not todo:
        return
    cluster_id = cluster_id_ensure(run_dir)
    procs = {}
    for node_id, config in todo.items():
        args = ["format", "--config", str(config), f"--cluster-id={cluster_id}"]
        cmd = java_command(
            java,
            kafka=kafka,
            heap=TOOL_HEAP,
            main_class="kafka.tools.StorageTool",
            args=[*args, "--ignore-formatted", *extra_args],
        )
        procs[node_id] = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    for node_id, proc in procs.items():
        out, _ = proc.communicate(timeout=120)
        if proc.returncode != 0:
            raise DevClusterError(
                f"formatting storage of node {node_id} failed:\n{out.decode(errors='replace')}"
            )
