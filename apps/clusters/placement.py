"""A topic's placement packed into one compact value, kept on its Topic row by the sync.

Per partition, sorted by index, as 32-bit little-endian integers: index, leader (-1:
none), the number of replicas, the replicas in order, the number of in-sync
replicas, the ISR. The snapshot and the sync's diff read a 200k-partition cluster
from its 8,000 topic rows with no per-partition row or JSON to decode, and the
digest that tells an unchanged topic is this value's hash.
"""

from __future__ import annotations

import hashlib
import sys
from array import array
from collections.abc import Iterable, Iterator
from operator import attrgetter
from typing import NamedTuple

# (index, leader or None, replicas, isr)
Unpacked = tuple[int, int | None, list[int], list[int]]


_by_index = attrgetter("index")


class PackedPartition(NamedTuple):
    """One partition to pack, for callers without a PartitionState (the migration)."""

    index: int
    leader: int | None
    replicas: list[int]
    isr: list[int]


def placement_pack(*, partitions: Iterable) -> bytes:
    """Anything with index, leader, replicas and isr (a PartitionState), packed."""
    # A list turned into the array at once: faster than appending to the array.
    flat: list[int] = []
    append, extend = flat.append, flat.extend
    for p in sorted(partitions, key=_by_index):
        replicas, isr = p.replicas, p.isr
        append(p.index)
        append(-1 if p.leader is None else p.leader)
        append(len(replicas))
        extend(replicas)
        append(len(isr))
        extend(isr)
    packed = array("i", flat)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


def placement_hash(*, packed: bytes) -> str:
    return hashlib.blake2b(packed, digest_size=16).hexdigest()


def _ints(packed: bytes) -> array:
    flat = array("i")
    flat.frombytes(bytes(packed))
    if sys.byteorder == "big":
        flat.byteswap()
    return flat


def placement_unpack(*, packed: bytes) -> Iterator[Unpacked]:
    """(index, leader, replicas, isr) per partition: plain tuples, since a named tuple
    per partition costs a good part of the snapshot's time on a large cluster."""
    flat = _ints(packed)
    i, end = 0, len(flat)
    while i < end:
        index, leader, count = flat[i], flat[i + 1], flat[i + 2]
        j = i + 3 + count
        isr_end = j + 1 + flat[j]
        yield (
            index,
            None if leader < 0 else leader,
            flat[i + 3 : j].tolist(),
            flat[j + 1 : isr_end].tolist(),
        )
        i = isr_end


class PlacementDiff(NamedTuple):
    """Partition indexes: in both with a different leader, replicas or ISR; only in
    the new placement; only in the stored one."""

    updated: list[int]
    added: list[int]
    removed: list[int]


def placement_diff(*, stored: bytes, packed: bytes) -> PlacementDiff:
    """What differs between two packed placements, record by record as packed: no
    list or tuple is built per partition (unpacking both makes the sync's diff of a
    changed topic several times as slow)."""
    old, new = _ints(stored), _ints(packed)
    updated: list[int] = []
    added: list[int] = []
    removed: list[int] = []
    i = j = 0
    old_end, new_end = len(old), len(new)
    # Both are sorted by index: walk them side by side, each record's end from its
    # two counts (replicas, then ISR).
    while i < old_end and j < new_end:
        i_next = i + 3 + old[i + 2]
        i_next += 1 + old[i_next]
        j_next = j + 3 + new[j + 2]
        j_next += 1 + new[j_next]
        a, b = old[i], new[j]
        if a == b:
            if old[i:i_next] != new[j:j_next]:
                updated.append(b)
            i, j = i_next, j_next
        elif a < b:
            removed.append(a)
            i = i_next
        else:
            added.append(b)
            j = j_next
    while i < old_end:
        removed.append(old[i])
        i += 3 + old[i + 2]
        i += 1 + old[i]
    while j < new_end:
        added.append(new[j])
        j += 3 + new[j + 2]
        j += 1 + new[j]
    return PlacementDiff(updated=updated, added=added, removed=removed)
