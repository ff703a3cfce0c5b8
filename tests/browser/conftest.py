"""A live product for browser tests: Daphne (HTTP + websockets) in a subprocess on a
free port, its own migrated SQLite file, Redis for the channel layer, and Debian's
headless Chromium driven by Playwright (never a downloaded browser).

pytest-django's live_server speaks no websockets and its in-memory test database is
invisible to another process, so the site gets a database file of its own, and the
tests read and write it through `site.call(fn, ...)`: a worker thread whose default
connection points at that file. (The Playwright sync API keeps an event loop in the
main thread, where Django refuses ORM calls.)
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from django.db.utils import load_backend
from django.test import override_settings

from tests.support.migrated import sqlite_migrated

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Our own Redis database: the dev server and other sessions use 0.
REDIS_DB = 11
# The README's pictures are refreshed on request only, so a test run leaves the tree clean.
SCREENSHOTS = (
    ROOT / "docs" / "screenshots"
    if os.environ.get("UPDATE_SCREENSHOTS") == "1"
    else ROOT / ".run" / "screenshots"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveSite:
    def __init__(self, base_url: str, executor: ThreadPoolExecutor) -> None:
        self.base_url = base_url
        self._executor = executor

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run fn against the site's database (in the worker thread) and return its result."""
        return self._executor.submit(fn, *args, **kwargs).result(timeout=60)

    def url(self, path: str) -> str:
        return self.base_url + path


@pytest.fixture(scope="module")
def site(redis_server: str, django_db_blocker) -> Iterator[LiveSite]:
    with live_site_run(redis_server, django_db_blocker) as live:
        yield live


@contextmanager
def live_site_run(
    redis_server: str, django_db_blocker, extra_env: dict[str, str] | None = None, port: int = 0
) -> Iterator[LiveSite]:
    """The product under Daphne with `extra_env` on top (e.g. single sign-on settings),
    on `port` (0: a free one)."""
    workdir = Path(tempfile.mkdtemp(prefix="it-dash-browser-"))
    database = workdir / "site.sqlite3"
    redis_url = redis_server.rsplit("/", 1)[0] + f"/{REDIS_DB}"
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{database}",
        "REDIS_URL": redis_url,
        # Approvals enqueue executions: keep them in this process's memory, away from
        # any worker of `make run` sharing the Redis broker.
        "CELERY_BROKER_URL": "memory://",
        "DJANGO_DEBUG": "1",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        **(extra_env or {}),
    }
    sqlite_migrated(database)
    port = port or free_port()
    log = open(workdir / "daphne.log", "wb")  # noqa: SIM115 - closed below
    daphne = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "daphne",
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "balancer_site.asgi:application",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base_url = f"http://127.0.0.1:{port}"
    layer = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [redis_url]},
        }
    }

    def use_site_database() -> None:
        # This thread's default connection: the site's file, not the test database.
        current = connections["default"]
        backend = load_backend(current.settings_dict["ENGINE"])
        connections["default"] = backend.DatabaseWrapper(
            {**current.settings_dict, "NAME": str(database)}, "default"
        )

    executor = ThreadPoolExecutor(max_workers=1, initializer=use_site_database)
    overrides = override_settings(CHANNEL_LAYERS=layer)
    overrides.enable()
    try:
        with django_db_blocker.unblock():
            _wait_until_up(base_url, daphne, workdir / "daphne.log")
            yield LiveSite(base_url, executor)
    finally:
        overrides.disable()
        executor.submit(lambda: connections["default"].close()).result(timeout=30)
        executor.shutdown()
        os.killpg(daphne.pid, signal.SIGTERM)
        try:
            daphne.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(daphne.pid, signal.SIGKILL)
            daphne.wait()
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)


def _wait_until_up(base_url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"daphne exited ({process.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(base_url + "/accounts/login/", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"daphne did not answer within 60 s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: scripts/bootstrap installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def sign_in(site: LiveSite, browser):
    """sign_in(username, password[, width]) -> a page in a fresh browser context, signed
    in, its window 1400 px wide unless told (the README's screenshots are at 1400 px)."""
    contexts = []

    def open_as(username: str, password: str, width: int = 1400):
        context = browser.new_context(viewport={"width": width, "height": 900})
        contexts.append(context)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.js_errors = errors
        page.goto(site.url("/accounts/login/"))
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_url(site.url("/"))
        return page

    yield open_as
    for context in contexts:
        context.close()


def screenshot(page, name: str, element: str | None = None) -> Path:
    """Saved to .run/screenshots, or where the README shows them with UPDATE_SCREENSHOTS=1;
    the whole page, or the element `element` selects."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    if element is None:
        page.screenshot(path=str(path), full_page=True)
    else:
        page.locator(element).screenshot(path=str(path))
    return path
