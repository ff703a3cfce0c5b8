"""A migrated SQLite file for the tests that run the product in processes of their own
(Daphne, Celery workers and beat): `manage.py migrate` runs once per test session, into
a template, and each such site starts from a copy. The schema is the same every time;
the migrations cost seconds each (far more on a busy machine)."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def _template() -> Path:
    workdir = Path(tempfile.mkdtemp(prefix="it-migrated-"))
    atexit.register(shutil.rmtree, workdir, ignore_errors=True)
    template = workdir / "template.sqlite3"
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": f"sqlite:///{template}"},
        check=True,
        capture_output=True,
        timeout=180,
    )
    return template


def sqlite_migrated(database: Path) -> None:
    """Put a freshly migrated SQLite database at `database` (a copy of the template)."""
    shutil.copyfile(_template(), database)
