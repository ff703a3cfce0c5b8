"""Which log dir holds each replica of a topic, packed beside its placement by the sync.

Kafka brokers may have several log dirs (JBOD). Per partition, sorted by index as in
the packed placement (apps.clusters.placement), one 16-bit little-endian integer per
replica in replica order: the index of the dir holding it in that broker's
Broker.log_dirs (sorted by path), or -1 when unknown (a broker down or not answering,
a dir offline). 2 bytes a replica: 1.2 MB for 200k partitions of 3 replicas.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Mapping
from operator import attrgetter

UNKNOWN = -1
_NONE: Mapping = {}
_by_index = attrgetter("index")

# {broker id: {(topic, partition): index of its dir in Broker.log_dirs}}
DirsOfReplicas = Mapping[int, Mapping[tuple[str, int], int]]


def replica_dirs_pack(*, topic: str, partitions: Iterable, dirs: DirsOfReplicas) -> bytes:
    """Anything with index and replicas (a PartitionState) of `topic`, packed."""
    flat: list[int] = []
    extend = flat.extend
    for p in sorted(partitions, key=_by_index):
        key = (topic, p.index)
        extend([dirs.get(b, _NONE).get(key, UNKNOWN) for b in p.replicas])
    packed = array("h", flat)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


def replica_dirs_unpack(
    *, packed: bytes | None, replica_counts: list[int]
) -> list[list[int]] | None:
    """Per partition (in the placement's order, whose replica counts are given), the dir
    index of each replica; None when unknown or not packed for this placement."""
    if packed is None:
        return None
    flat = array("h")
    flat.frombytes(bytes(packed))
    if sys.byteorder == "big":
        flat.byteswap()
    if len(flat) != sum(replica_counts):
        return None
    out, i = [], 0
    for count in replica_counts:
        out.append(flat[i : i + count].tolist())
        i += count
    return out
