"""Operating-system processes: pid files, liveness, signals and log tails.

Only the standard library, so `down` still works from a bare python3.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from .errors import DevClusterError

# SIGTERM starts a controlled shutdown, which hands over every leadership first: with
# thousands of partitions that takes long, and a SIGKILL then would leave
# unclean logs that take minutes to recover on the next start.
STOP_TIMEOUT_S = 120.0

# Processes started by this Python process. Keeping the Popen objects avoids "subprocess
# is still running" ResourceWarnings when they'd otherwise be garbage collected.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def adopt(proc: subprocess.Popen[bytes]) -> None:
    """Remember a child started by this process, so it can be reaped when it exits."""
    _CHILDREN[proc.pid] = proc


def read_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None


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


def alive(pid: int) -> bool:
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


def pid_matches(pid: int, marker: str, settle: float = 30.0) -> bool:
    """True if pid is alive and its command line contains marker.

    The marker check keeps us from signalling an unrelated process that reused a stale pid.
    An empty cmdline means the process is mid-exec (Popen can return before the kernel has
    set up the new argv) or already exiting: wait until it shows a cmdline or is gone, so a
    half-dead node is never taken for stopped and started twice on the same ports.
    """
    deadline = time.monotonic() + settle
    while alive(pid):
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
    left = set(pids)
    while left and time.monotonic() < deadline:
        # Only existence matters here: identity was checked before the signal was sent.
        left = {p for p in left if alive(p)}
        if left:
            time.sleep(0.1)
    return left


def terminate(pids: set[int], kill: bool = False, timeout: float = STOP_TIMEOUT_S) -> None:
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


def tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def find_java() -> str:
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


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False
