"""`make run` installs what the product needs; the browser and PostgreSQL only come with
the tests (`scripts/test` bootstraps with --tests)."""

import shutil
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


def stamp(root: Path, *args: str) -> str:
    return subprocess.run(
        ["scripts/bootstrap", *args, "--requirements-stamp"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout.strip()


def test_it_installs_the_runtime_set_for_run_and_the_dev_set_for_tests():
    assert stamp(ROOT).endswith(" requirements.txt")
    assert stamp(ROOT, "--tests").endswith(" requirements-dev.txt")
    assert "--require-hashes" in (ROOT / "scripts" / "bootstrap").read_text()


def test_it_reinstalls_when_either_requirements_file_changes(tmp_path):
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "bootstrap", tmp_path / "scripts" / "bootstrap")
    for name in ("requirements.txt", "requirements-dev.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    before = stamp(tmp_path)
    for name in ("requirements.txt", "requirements-dev.txt"):
        with (tmp_path / name).open("a") as f:
            f.write("# changed\n")
        after = stamp(tmp_path)
        assert after != before, f"a change to {name} goes unnoticed"
        before = after
