"""Upgrades without a stop (docs/deployment.md): a migration applied while a real
clusters worker and beat of this release keep syncing the dev cluster every second,
standing in for the previous release under the next one's migration.

The additive migration (tests/upgrade/next_release.py: a required column with a database
default, a nullable column, an index, on the tables a sync writes; SQLite rebuilds the
table for the first) leaves the worker syncing, new topics included. A required column
with a Python-side default only, which tests/test_migrations_additive.py forbids, makes
the same worker's next insert fail: that is what the rule prevents."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from confluent_kafka.admin import AdminClient
from devkit.live import FRESH_METADATA, topic_create
from devkit.polling import wait_until

from tests.support.migrated import sqlite_migrated
from tests.support.processes import processes_start, processes_stop

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
CELERY = [sys.executable, "-m", "celery", "-A", "balancer_site"]
REDIS_DB = 14  # ours alone: the dev server uses 0, the browser tests 11, the beats 13


@pytest.fixture
def site(tmp_path: Path, kafka_cluster, redis_server) -> Iterator[dict]:
    """A migrated SQLite file with the dev cluster registered, then beat and a clusters
    worker as scripts/run starts them, syncing every second."""
    database = tmp_path / "db.sqlite3"
    broker_url = redis_server.rsplit("/", 1)[0] + f"/{REDIS_DB}"
    redis.Redis.from_url(broker_url).flushdb()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{database}",
        "REDIS_URL": broker_url,
        "CLUSTER_SYNC_INTERVAL": "1",
        "METRICS_SAMPLE_INTERVAL": "3600",
        "METRICS_AGGREGATE_INTERVAL": "86400",
        "PYTHONPATH": str(REPO),
    }
    sqlite_migrated(database)
    register = (
        "from apps.clusters.services import cluster_register as r;"
        f"r(name='upgrade', bootstrap_servers='{kafka_cluster.bootstrap_servers}')"
    )
    manage = [sys.executable, str(REPO / "manage.py")]
    subprocess.run([*manage, "shell", "-c", register], env=env, check=True, capture_output=True)
    commands = {
        "clusters-worker": [*CELERY, "worker", "-P", "threads", "--concurrency=8"]
        + ["-Q", "clusters", "-n", f"upgrade-{os.getpid()}@%h"],
        "beat": [*CELERY, "beat", f"--schedule={tmp_path / 'beat-schedule'}", "--pidfile="],
    }
    processes, logs = processes_start(commands=commands, env=env, cwd=REPO, logs_dir=tmp_path)
    admin = AdminClient({"bootstrap.servers": kafka_cluster.bootstrap_servers, **FRESH_METADATA})
    created: list[str] = []
    try:
        yield {"db": database, "env": env, "logs": logs, "admin": admin, "created": created}
    finally:
        processes_stop(processes)
        if created:
            for future in admin.delete_topics(created).values():
                future.result(30)
        redis.Redis.from_url(broker_url).flushdb()


def _one(db: Path, sql: str, *args) -> tuple | None:
    with sqlite3.connect(db, timeout=20) as conn:
        return conn.execute(sql, args).fetchone()


def _last_sync(db: Path) -> str | None:
    """When the cluster's last sync round ended."""
    row = _one(
        db,
        "SELECT r.last_finished_at FROM clusters_clusterround r JOIN clusters_cluster c"
        " ON c.id = r.cluster_id WHERE c.name = 'upgrade' AND r.kind = 'sync'",
    )
    return row[0] if row else None


def _topic_row(db: Path, name: str) -> tuple | None:
    return _one(db, "SELECT * FROM clusters_topic WHERE name = ?", name)


def _migrate(site: dict, kind: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.upgrade.next_release", kind],
        cwd=REPO,
        env=site["env"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def _new_topic(site: dict, kind: str) -> str:
    name = f"it-upgrade-{kind}-{uuid.uuid4().hex[:6]}"
    topic_create(site["admin"], name, partitions=2, rf=2)
    site["created"].append(name)
    return name


def test_it_keeps_the_worker_syncing_through_an_additive_migration(site) -> None:
    db, worker_log = site["db"], site["logs"]["clusters-worker"]
    before = wait_until(lambda: _last_sync(db), timeout=90, what="the first sync")
    wait_until(lambda: _last_sync(db) != before, timeout=30, what="a second sync")

    _migrate(site, "additive")
    arrived = _new_topic(site, "additive")

    row = wait_until(lambda: _topic_row(db, arrived), timeout=60, what="the new topic synced")
    columns = [c[1] for c in sqlite3.connect(db).execute("PRAGMA table_info(clusters_topic)")]
    assert row[columns.index("next_count")] == 0  # the database filled the column in
    after = _last_sync(db)
    wait_until(lambda: _last_sync(db) != after, timeout=30, what="a sync after the topic")
    assert "Traceback" not in worker_log.read_text(errors="replace")

    # The rule's reason: a required column the database has no default for.
    _migrate(site, "required")
    refused = _new_topic(site, "required")

    wait_until(
        lambda: (
            "NOT NULL constraint failed: clusters_topic.next_required"
            in worker_log.read_text(errors="replace")
        ),
        timeout=60,
        what="the worker's insert of the new topic refused",
    )
    assert _topic_row(db, refused) is None
