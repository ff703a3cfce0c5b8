"""Partition directories a broker's log dir keeps that Kafka will never read again.

Kafka (KRaft, 4.x) moves a replica removed while its broker was offline aside instead of
deleting it: at the broker's next start, a `<topic>-<partition>` directory the metadata
no longer assigns to it is renamed `<topic>-<partition>.<id>-stray` and kept, open,
until the broker stops; nothing in the broker ever deletes it (LogManager only records
it, KAFKA-15698). On the dev cluster every self-heal and drain of a stopped broker would
leave its replicas on disk for good. So before a broker starts, its `-stray`
directories go, and so do the `<topic>-<partition>` directories the running cluster's
metadata does not assign to it (the ones Kafka would make stray).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping
from pathlib import Path

STRAY_SUFFIX = "-stray"
_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")
# The broker's own copy of the metadata log: never a replica of a topic.
_METADATA_DIR = "__cluster_metadata-0"


def stray_dirs(
    data_dir: Path, *, broker_id: int, assignment: Mapping[str, Mapping[int, list[int]]] | None
) -> list[Path]:
    """The directories of `data_dir` to delete before broker `broker_id` starts.

    `assignment`: topic -> partition -> replicas, as the running cluster's metadata says
    (None when no broker answered: then only the `-stray` directories, Kafka's own verdict).
    """
    if not data_dir.is_dir():
        return []
    found = []
    for path in sorted(data_dir.iterdir()):
        if not path.is_dir() or path.name == _METADATA_DIR:
            continue
        if path.name.endswith(STRAY_SUFFIX):
            found.append(path)
            continue
        match = _PARTITION_DIR.match(path.name)
        if match is None or assignment is None:
            continue  # `-delete` and `-future` directories are Kafka's to handle
        replicas = assignment.get(match["topic"], {}).get(int(match["partition"]))
        if replicas is None or broker_id not in replicas:
            found.append(path)
    return found


def stray_dirs_remove(
    data_dir: Path, *, broker_id: int, assignment: Mapping[str, Mapping[int, list[int]]] | None
) -> int:
    """Delete what stray_dirs finds; the bytes freed."""
    freed = 0
    for path in stray_dirs(data_dir, broker_id=broker_id, assignment=assignment):
        freed += sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
        shutil.rmtree(path, ignore_errors=True)
    return freed
