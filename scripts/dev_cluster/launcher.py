"""Starting one Kafka node as a detached JVM, with its output appended to server.log."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from .jvm import java_command
from .processes import adopt
from .versions import KafkaVersion

LOG_ROTATE_BYTES = 20 * 1024 * 1024


def node_launch(
    *, java: str, kafka: KafkaVersion, heap: str, node_dir: Path, config: Path, log_file: Path
) -> int:
    """Start `kafka.Kafka config` in its own session; return its pid."""
    cmd = java_command(
        java,
        kafka=kafka,
        heap=heap,
        main_class="kafka.Kafka",
        args=[str(config)],
        sysprops=(f"-Dkafka.logs.dir={node_dir}",),
    )
    # Appended to across restarts (the previous run's end is often what you want to read);
    # rotated once so frequent test restarts can't fill the disk.
    if log_file.exists() and log_file.stat().st_size > LOG_ROTATE_BYTES:
        log_file.replace(log_file.with_name(log_file.name + ".1"))
    with open(log_file, "ab") as log:
        log.write(f"\n===== starting node {config.parent.name} at {time.ctime()} =====\n".encode())
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
    adopt(proc)
    return proc.pid
