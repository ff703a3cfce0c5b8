"""Shared use of one cluster by several sessions: lease files and "auto-started" marks.

Each user (e.g. a pytest session) holds `<run_dir>/leases/<kind>-<pid>`; a
`<kind>.auto-started` mark says a use() block started it, so the last user out stops it.
A cluster a person started (`dev-cluster up`, `make run`) carries no mark and is never
stopped by a use() block.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .processes import alive

if TYPE_CHECKING:
    from .cluster import DevCluster


def _live_leases(lease_dir: Path, kind: str) -> list[int]:
    pids = []
    for path in lease_dir.glob(f"{kind}-*"):
        pid = int(path.name.rsplit("-", 1)[1])
        if alive(pid):
            pids.append(pid)
        else:  # a crashed session: its lease no longer counts
            path.unlink(missing_ok=True)
    return pids


def auto_started_forget(lease_dir: Path, kinds: Iterable[str]) -> None:
    """Mark Kafka/Redis as wanted by a person (CLI up/down): use() will not stop them."""
    for kind in kinds:
        (lease_dir / f"{kind}.auto-started").unlink(missing_ok=True)


@contextlib.contextmanager
def cluster_use(
    cluster: DevCluster, *, kafka: bool, redis: bool, timeout: float
) -> Iterator[DevCluster]:
    """Make sure the cluster (and/or Redis) is up inside the block; leave it as found."""
    kinds = [k for k, wanted in (("kafka", kafka), ("redis", redis)) if wanted]
    leases = cluster.lease_dir
    with cluster.lock.held():
        leases.mkdir(parents=True, exist_ok=True)
        if kafka:
            if not cluster.running_nodes():
                (leases / "kafka.auto-started").touch()
            try:
                cluster.up(redis=False, timeout=timeout)
            except BaseException:
                # Nobody will hold a lease on a cluster that failed to come up: stop
                # whatever part of it this block started.
                if not _live_leases(leases, "kafka") and (leases / "kafka.auto-started").exists():
                    (leases / "kafka.auto-started").unlink()
                    cluster.down(redis=False)
                raise
        if redis and not cluster.redis.answering():
            cluster.redis_up()
            if cluster.redis_status().pid is not None:
                (leases / "redis.auto-started").touch()
        for kind in kinds:
            (leases / f"{kind}-{os.getpid()}").touch()
    try:
        yield cluster
    finally:
        with cluster.lock.held():
            for kind in kinds:
                (leases / f"{kind}-{os.getpid()}").unlink(missing_ok=True)
                flag = leases / f"{kind}.auto-started"
                if flag.exists() and not _live_leases(leases, kind):
                    flag.unlink()
                    if kind == "kafka":
                        cluster.down(redis=False)
                    else:
                        cluster.redis_down()
