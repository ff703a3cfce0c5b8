"""`make run` installs what the product needs; the browser and PostgreSQL only come with
the tests (`scripts/test` bootstraps with --tests)."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def packages(*args: str) -> set[str]:
    out = subprocess.run(
        ["scripts/bootstrap", *args, "--list-packages"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    return set(out.split())


def test_make_run_installs_no_browser():
    wanted = packages()
    assert "redis-server" in wanted
    assert not wanted & {"chromium", "chromium-driver", "postgresql"}


def test_the_tests_install_the_browser_and_postgres():
    assert {"chromium", "chromium-driver", "postgresql", "redis-server"} <= packages("--tests")
    assert "scripts/bootstrap --tests" in (ROOT / "scripts" / "test").read_text()
