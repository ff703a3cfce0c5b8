"""The product running for the web and Redis faults: Daphne (and, when asked, a Celery
worker) in subprocesses on their own migrated SQLite file and their own Redis database,
so a case can stop and restart any of them (or Redis) under an open browser.

Like tests/browser (whose helpers it reuses), the test reads and writes the site's
database through `site.call(fn, ...)`: a worker thread whose default connection is
that file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from django.db import connections
from django.db.utils import load_backend

from tests.browser.conftest import _wait_until_up, free_port
from tests.support.migrated import sqlite_migrated

ROOT = Path(__file__).resolve().parents[2]
REDIS_DB = 12  # ours alone: the dev server uses 0, the browser tests 11


class Site:
    def __init__(self, workdir: Path, redis_url: str, worker: bool = False) -> None:
        self.workdir = workdir
        self.database = workdir / "site.sqlite3"
        self.redis_url = redis_url.rsplit("/", 1)[0] + f"/{REDIS_DB}"
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{self.database}",
            "REDIS_URL": self.redis_url,
            "CELERY_BROKER_URL": self.redis_url if worker else "memory://",
            "CELERY_TASK_ALWAYS_EAGER": "0",
            "DJANGO_DEBUG": "1",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "EXECUTOR_POLL_INTERVAL": "0.5",
        }
        self.daphne: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None
        self._logs: list = []
        self._executor = ThreadPoolExecutor(max_workers=1, initializer=self._use_site_database)

    def _use_site_database(self) -> None:
        current = connections["default"]
        backend = load_backend(current.settings_dict["ENGINE"])
        connections["default"] = backend.DatabaseWrapper(
            {**current.settings_dict, "NAME": str(self.database)}, "default"
        )

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return self._executor.submit(fn, *args, **kwargs).result(timeout=120)

    def url(self, path: str) -> str:
        return self.base_url + path

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.workdir / f"{name}.log", "ab")  # noqa: SIM115 - closed in stop()
        self._logs.append(log)
        return subprocess.Popen(
            args,
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def migrate(self) -> None:
        sqlite_migrated(self.database)

    def shell(self, code: str) -> str:
        """Run `code` in `manage.py shell` with the site's settings (its database, its
        Celery broker): what one of its processes would do."""
        done = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", code],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def daphne_start(self) -> None:
        self.daphne = self._spawn(
            "daphne",
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port)]
            + ["balancer_site.asgi:application"],
        )
        _wait_until_up(self.base_url, self.daphne, self.workdir / "daphne.log")

    def daphne_stop(self, sig: int = signal.SIGTERM) -> None:
        _end(self.daphne, sig)

    def worker_start(self) -> None:
        self.worker = self._spawn(
            "worker",
            [sys.executable, "-m", "celery", "-A", "balancer_site", "worker"]
            + ["--loglevel=INFO", "--pool=solo", "-Q", "celery", "-n", f"faults-{self.port}@%h"],
        )

    def stop(self) -> None:
        _end(self.daphne, signal.SIGTERM)
        _end(self.worker, signal.SIGTERM)
        self._executor.submit(lambda: connections["default"].close()).result(timeout=30)
        self._executor.shutdown()
        for log in self._logs:
            log.close()

    def log(self, name: str) -> str:
        return (self.workdir / f"{name}.log").read_text(errors="replace")[-3000:]


def _end(process: subprocess.Popen | None, sig: int) -> None:
    if process is None or process.poll() is not None:
        return
    os.killpg(process.pid, sig)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
