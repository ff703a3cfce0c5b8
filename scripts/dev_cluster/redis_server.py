"""The Redis beside the dev cluster: reuse one that answers, else start (or install) one."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from .errors import DevClusterError
from .processes import adopt, pid_matches, read_pid, tail, terminate

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


@dataclass
class RedisStatus:
    url: str
    answering: bool
    pid: int | None  # set only when this tool started it


def redis_ping(host: str, port: int, timeout: float = 1.0) -> bool:
    """True if something speaking the Redis protocol answers on host:port."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            reply = sock.recv(64)
    except OSError:
        return False
    # "-NOAUTH ..." is still a Redis server, just one with a password: reuse it too.
    return reply.startswith(b"+PONG") or reply.startswith(b"-NOAUTH")


class RedisServer:
    """A Redis at url; only one this tool started (pid file in redis_dir) is ever stopped."""

    def __init__(self, url: str, redis_dir: Path) -> None:
        self.url = url
        self.redis_dir = redis_dir

    @property
    def host_port(self) -> tuple[str, int]:
        parsed = urlparse(self.url)
        return parsed.hostname or "127.0.0.1", parsed.port or 6379

    @property
    def _pid_file(self) -> Path:
        return self.redis_dir / "redis.pid"

    def answering(self) -> bool:
        return redis_ping(*self.host_port)

    def status(self) -> RedisStatus:
        pid = read_pid(self._pid_file)
        if pid is not None and not pid_matches(pid, "redis-server"):
            pid = None
        return RedisStatus(self.url, self.answering(), pid)

    def up(self, timeout: float = 15.0) -> str:
        """Make sure Redis answers at url (reusing any server there); return the url."""
        host, port = self.host_port
        if redis_ping(host, port):
            return self.url
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise DevClusterError(f"no Redis answers at {self.url} (not local: won't start)")
        server = shutil.which("redis-server") or _redis_install()
        if redis_ping(host, port):  # the Debian package may have started its own service
            return self.url
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
        adopt(proc)
        self._pid_file.write_text(f"{proc.pid}\n")
        deadline = time.monotonic() + timeout
        while not redis_ping(host, port):
            if proc.poll() is not None or time.monotonic() > deadline:
                if proc.poll() is None:
                    terminate({proc.pid}, timeout=5.0)
                raise DevClusterError(
                    f"redis-server did not come up on port {port}:\n"
                    + tail(self.redis_dir / "redis.log")
                )
            time.sleep(0.1)
        return self.url

    def down(self, timeout: float = 10.0) -> None:
        """Stop Redis only if this tool started it."""
        pid = read_pid(self._pid_file)
        if pid is not None and pid_matches(pid, "redis-server"):
            terminate({pid}, timeout=timeout)
        self._pid_file.unlink(missing_ok=True)


def _redis_install() -> str:
    install = "apt-get update && apt-get install -y redis-server"
    if os.geteuid() != 0:
        raise DevClusterError(f"redis-server not found; install it with: sudo sh -c '{install}'")
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
