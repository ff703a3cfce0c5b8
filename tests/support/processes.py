"""Product processes (Celery workers, beat) started by a test in process groups of
their own, each with its log, and stopped afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path


def processes_start(
    *, commands: dict[str, list[str]], env: dict[str, str], cwd: Path, logs_dir: Path
) -> tuple[list[subprocess.Popen], dict[str, Path]]:
    """Start each command (its name: its argv) with `--loglevel=INFO`, its output in
    `logs_dir/NAME.log`; the processes and the logs."""
    processes, logs = [], {}
    for name, command in commands.items():
        logs[name] = logs_dir / f"{name}.log"
        with logs[name].open("w") as log:
            processes.append(
                subprocess.Popen(
                    [*command, "--loglevel=INFO"],
                    env=env,
                    cwd=cwd,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
    return processes, logs


def processes_stop(processes: list[subprocess.Popen], *, timeout: float = 20) -> None:
    """SIGTERM each process group, then SIGKILL what has not ended within `timeout`."""
    for process in processes:
        os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
