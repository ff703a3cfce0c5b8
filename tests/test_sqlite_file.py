"""The default SQLite file: WAL journal (readers and the writer don't wait for each
other) and writers that take the write lock when their transaction begins."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_it_opens_the_file_in_wal_mode_with_immediate_writers(tmp_path: Path) -> None:
    code = (
        "from django.db import connection\n"
        "c = connection.cursor()\n"
        "c.execute('PRAGMA journal_mode')\n"
        "print(c.fetchone()[0], connection.settings_dict['OPTIONS']['transaction_mode'])\n"
    )
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-v", "0", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["wal", "IMMEDIATE"]
