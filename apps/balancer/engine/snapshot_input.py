"""The snapshot of BALANCING.md §1 as typed values: what the apps build from the cluster
model and hand to the engine, and what `as_json` writes for `manage.py snapshot`.

`parse_snapshot` takes either this or the decoded JSON; both end in one `Snapshot`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

LOAD_KEYS = ("bytes_in", "bytes_out", "messages_in", "size")


@dataclass(slots=True)
class SnapshotBroker:
    id: int
    rack: str | None = None
    alive: bool = True
    # network_in / network_out / disk; a resource left out is unbounded.
    capacity: dict[str, float] = field(default_factory=dict)
    # Its disks (JBOD): {"path", "total", "usable", "online"} each; None: not known.
    log_dirs: list[dict[str, Any]] | None = None

    def as_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"id": self.id, "rack": self.rack, "alive": self.alive}
        if self.capacity:
            entry["capacity"] = dict(self.capacity)
        if self.log_dirs is not None:
            entry["log_dirs"] = [dict(d) for d in self.log_dirs]
        return entry


@dataclass(slots=True)
class SnapshotPartition:
    topic: str
    partition: int
    replicas: list[int]
    leader: int = -1  # -1: offline
    # The measured figures of LOAD_KEYS; None: not measured; a figure left out is zero.
    load: dict[str, float] | None = None
    # The dir of each replica (a path its broker lists in log_dirs), aligned with
    # replicas; None in it: that replica's dir is unknown; None: none known.
    log_dirs: list[str | None] | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (self.topic, self.partition)

    def as_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "topic": self.topic,
            "partition": self.partition,
            "replicas": list(self.replicas),
            "leader": self.leader,
        }
        if self.load is not None:
            entry["load"] = dict(self.load)
        if self.log_dirs is not None:
            entry["log_dirs"] = list(self.log_dirs)
        return entry


@dataclass(frozen=True, slots=True)
class SnapshotWindow:
    start: str  # ISO 8601, UTC
    end: str


@dataclass(slots=True)
class ClusterSnapshot:
    cluster: str
    taken_at: str  # ISO 8601, UTC
    brokers: list[SnapshotBroker]
    partitions: list[SnapshotPartition]
    # The window the loads come from; None when no partition is measured.
    window: SnapshotWindow | None = None

    def with_partitions(self, partitions: list[SnapshotPartition]) -> ClusterSnapshot:
        return dataclasses.replace(self, partitions=partitions)

    def with_brokers(self, brokers: list[SnapshotBroker]) -> ClusterSnapshot:
        return dataclasses.replace(self, brokers=brokers)

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "cluster": self.cluster,
            "taken_at": self.taken_at,
            "brokers": [b.as_json() for b in self.brokers],
            "partitions": [p.as_json() for p in self.partitions],
        }
        if self.window is not None:
            data["window"] = {"start": self.window.start, "end": self.window.end}
        return data
