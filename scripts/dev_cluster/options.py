"""The options a run dir's cluster was started with, kept in `<run_dir>/options.json`.

`up` records them; every later command (status, start-broker, ...) reads them, so a
cluster started with `up --controllers 3` keeps three controllers until it is reset.
Options that change how storage is formatted cannot change once the run dir holds data.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from .errors import DevClusterError
from .listeners import DEFAULT_PROFILE, PROFILES
from .versions import DEFAULT_KAFKA_VERSION, kafka_version_line

MAX_CONTROLLERS = 5
# Log dirs per broker (JBOD): a few are enough to exercise the disks-inside-a-broker paths.
MAX_LOG_DIRS = 8


@dataclass(frozen=True)
class ClusterOptions:
    controllers: int = 1
    profile: str = DEFAULT_PROFILE
    broker_heap: str | None = None  # e.g. "2g"; None: sized to the replicas each holds
    # Partitions the cluster is about to hold: a fresh or small run dir is sized for them.
    partitions_hint: int | None = None
    kafka_version: str = DEFAULT_KAFKA_VERSION  # a release line of versions.KAFKA_VERSIONS
    log_dirs: int = 1  # log dirs of each broker (JBOD); controllers keep one

    def validate(self) -> ClusterOptions:
        line = kafka_version_line(self.kafka_version)
        if line != self.kafka_version:
            return replace(self, kafka_version=line).validate()
        if not 1 <= self.controllers <= MAX_CONTROLLERS or self.controllers % 2 == 0:
            raise DevClusterError(
                f"--controllers must be an odd number from 1 to {MAX_CONTROLLERS} "
                f"(a KRaft quorum needs a majority), got {self.controllers}"
            )
        if self.broker_heap is not None and not re.fullmatch(
            r"[1-9][0-9]*[mMgG]", self.broker_heap
        ):
            raise DevClusterError(
                f"broker heap must look like 768m or 2g, got {self.broker_heap!r}"
            )
        if self.partitions_hint is not None and self.partitions_hint < 0:
            raise DevClusterError(
                f"--partitions-hint must be 0 or more, got {self.partitions_hint}"
            )
        if not 1 <= self.log_dirs <= MAX_LOG_DIRS:
            raise DevClusterError(
                f"--log-dirs must be from 1 to {MAX_LOG_DIRS}, got {self.log_dirs}"
            )
        if self.profile not in PROFILES:
            raise DevClusterError(
                f"unknown profile {self.profile!r} (known: {', '.join(PROFILES)})"
            )
        return self


# Changing these on a formatted run dir would leave nodes that cannot join each other, or
# (log_dirs) brokers whose replicas sit in a log dir missing from their settings.
FIXED_ONCE_FORMATTED = ("controllers", "kafka_version", "log_dirs")
# Running nodes must be restarted for these (the others apply to the next node started).
FIXED_WHILE_RUNNING = ("controllers", "profile", "kafka_version", "log_dirs")


def _path(run_dir: Path) -> Path:
    return run_dir / "options.json"


def options_load(run_dir: Path) -> ClusterOptions | None:
    """The recorded options, or None for a run dir that never ran `up` with this tool."""
    try:
        raw = json.loads(_path(run_dir).read_text())
    except (OSError, ValueError):
        return None
    known = {f.name for f in fields(ClusterOptions)}
    return ClusterOptions(**{k: v for k, v in raw.items() if k in known})


def options_resolve(run_dir: Path, **requested: object) -> ClusterOptions:
    """Recorded options overridden by the requested ones that are not None."""
    base = options_load(run_dir) or ClusterOptions()
    return replace(base, **{k: v for k, v in requested.items() if v is not None}).validate()


def options_check_change(
    run_dir: Path, wanted: ClusterOptions, *, formatted: bool, running: bool
) -> None:
    """Refuse to change an option the run dir's data or running nodes depend on."""
    recorded = options_load(run_dir) or ClusterOptions()
    if running:
        changed = [n for n in FIXED_WHILE_RUNNING if getattr(recorded, n) != getattr(wanted, n)]
        if changed:
            raise DevClusterError(
                f"the cluster in {run_dir} is running with "
                + ", ".join(f"{n}={getattr(recorded, n)}" for n in changed)
                + "; run `scripts/dev-cluster down` before changing that"
            )
    if not formatted:
        return
    for name in FIXED_ONCE_FORMATTED:
        old, new = getattr(recorded, name), getattr(wanted, name)
        if old != new:
            raise DevClusterError(
                f"{run_dir} holds a cluster formatted with {name}={old}, not {new}; "
                f"reset it first (`scripts/dev-cluster down && rm -rf {run_dir}`) "
                "or use another KAFKA_DEV_DIR"
            )


def options_save(run_dir: Path, options: ClusterOptions) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    _path(run_dir).write_text(json.dumps(asdict(options), indent=2) + "\n")
