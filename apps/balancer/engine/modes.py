"""Planning modes: which replicas may move, where to, and who may lead.

full            every goal; any replica may move to any usable broker.
add-brokers     move load onto the brokers in IDS only (replicas and leadership).
remove-brokers  drain IDS: every replica on them moves; only drained partitions change.
fix-offline     only what dead brokers force: their replicas move, nothing else.
leaders         leadership reordering only; no data is copied.
demote          leadership off IDS (they go last in every replica list); no data is copied.
remove-disks    empty the log dirs DISKS ((broker id, path) pairs): their replicas go to
                the broker's other dirs or, when those lack room, to other brokers.

Usable brokers are alive and not being removed; only they may receive replicas.
In `full` any replica may also move between the dirs of its broker (JBOD); in the
other modes only the replicas that arrive on a broker or sit in a dir that takes none
are placed, and `leaders` and `demote` touch no dir.
Demoted brokers (IDS of `demote`, and any demotion that holds, whatever the mode)
receive no leadership.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .disks import DISK_MOVES_ALL, DISK_MOVES_NEEDED, DISK_MOVES_NONE
from .errors import PlanError
from .goals import SOFT_GOALS
from .model import ModeSetup
from .snapshot import Snapshot

DISK_MOVES_OF_MODE = {"full": DISK_MOVES_ALL, "leaders": DISK_MOVES_NONE, "demote": DISK_MOVES_NONE}

MODES = (
    "full",
    "add-brokers",
    "remove-brokers",
    "fix-offline",
    "leaders",
    "demote",
    "remove-disks",
)


def default_soft_goals(mode: str) -> tuple[str, ...]:
    if mode in ("fix-offline", "demote"):
        # hard goals only: evacuate the dead / hand over the demoted's leadership
        return ()
    return SOFT_GOALS


def _broker_indices(snap: Snapshot, brokers: Iterable[int]) -> list[int]:
    out: list[int] = []
    for bid in brokers:
        if type(bid) is not int:
            raise PlanError(f"broker id {bid!r} is not an integer")
        i = snap.broker_index(bid)
        if i is None:
            raise PlanError(f"broker {bid} is not in the snapshot")
        if i not in out:
            out.append(i)
    return sorted(out)


def disk_parse(text: str) -> tuple[int, str] | None:
    """A dir to empty written "BROKER:DIR" (e.g. "3:/data/b") as (broker id, path), or
    None when it is not of that form."""
    broker, sep, path = text.strip().partition(":")
    path = path.strip()
    if not sep or not path or not broker.strip().lstrip("-").isdigit():
        return None
    return int(broker), path


def _removed_dirs(snap: Snapshot, disks: Iterable[tuple[int, str]]) -> np.ndarray:
    """(B, D) the dirs `disks` names, checked: each one its broker lists, and not every
    dir of a broker (that is remove-brokers)."""
    pairs = list(disks)
    if not pairs:
        raise PlanError("mode remove-disks needs the dirs to empty (BROKER:DIR)")
    if snap.log_dirs is None or snap.log_dir_online is None:
        raise PlanError("mode remove-disks needs a snapshot that lists the brokers' log dirs")
    removed = np.zeros(snap.log_dir_online.shape, dtype=bool)
    for pair in pairs:
        if not (isinstance(pair, tuple | list) and len(pair) == 2 and isinstance(pair[1], str)):
            raise PlanError(f"a dir to empty must be (broker id, path), got {pair!r}")
        bid, path = pair
        b = _broker_indices(snap, [bid])[0]
        if path not in snap.log_dirs[b]:
            listed = ", ".join(snap.log_dirs[b]) or "none"
            raise PlanError(f"broker {bid} has no log dir {path!r} (it lists: {listed})")
        removed[b, snap.log_dirs[b].index(path)] = True
    for b in np.flatnonzero(removed.any(axis=1)).tolist():
        if not (snap.log_dir_online[b] & ~removed[b]).any():
            raise PlanError(
                f"broker {int(snap.broker_ids[b])} would have no online log dir left: "
                "remove the broker (remove-brokers) instead"
            )
    return removed


def setup_mode(
    snap: Snapshot,
    mode: str,
    brokers: Iterable[int] = (),
    demoted: Iterable[int] = (),
    disks: Iterable[tuple[int, str]] = (),
) -> ModeSetup:
    if mode not in MODES:
        raise PlanError(f"unknown mode {mode!r} (known: {', '.join(MODES)})")
    disks = list(disks)
    if disks and mode != "remove-disks":
        raise PlanError(f"mode {mode} takes no dirs")
    removed_dirs = _removed_dirs(snap, disks) if mode == "remove-disks" else None
    ids = _broker_indices(snap, brokers)
    if mode in ("add-brokers", "remove-brokers", "demote"):
        if not ids:
            raise PlanError(f"mode {mode} needs the broker ids to act on")
    elif ids:
        raise PlanError(f"mode {mode} takes no broker ids")
    b = snap.n_brokers
    chosen = np.zeros(b, dtype=bool)
    chosen[ids] = True
    alive = snap.alive
    if mode == "add-brokers":
        dead = [int(snap.broker_ids[i]) for i in ids if not alive[i]]
        if dead:
            raise PlanError(f"broker {dead[0]} can't be added: it is not alive")
    removed = chosen if mode == "remove-brokers" else np.zeros(b, dtype=bool)
    usable = alive & ~removed
    if not usable.any():
        raise PlanError("no alive broker is left to hold replicas")
    assign = snap.replicas
    cells = assign >= 0
    on_unusable = (~usable)[np.maximum(assign, 0)] & cells
    if mode in ("full", "add-brokers"):
        movable = cells.copy()
    elif mode == "remove-brokers":
        movable = on_unusable
    elif mode == "fix-offline":
        movable = on_unusable & (~alive)[np.maximum(assign, 0)]
    elif mode == "remove-disks":
        movable = _in_dirs(snap, removed_dirs)
    else:  # leaders, demote
        movable = np.zeros_like(cells)
    # remove-brokers drains: leadership changes only where a partition is drained
    if mode == "remove-brokers":
        leader_movable = on_unusable.any(axis=1)
    elif mode == "remove-disks":
        leader_movable = movable.any(axis=1)
    else:
        leader_movable = np.ones(assign.shape[0], dtype=bool)
    dest = chosen & usable if mode == "add-brokers" else usable.copy()
    if mode == "add-brokers":
        leader_dest = chosen & usable
    elif mode == "fix-offline":
        leader_dest = np.zeros(b, dtype=bool)
    else:
        leader_dest = usable.copy()
    demoted_mask = np.zeros(b, dtype=bool)
    demoted_mask[_broker_indices(snap, demoted)] = True
    if mode == "demote":
        demoted_mask |= chosen
    if demoted_mask.any():
        leader_dest &= ~demoted_mask
        if not (usable & ~demoted_mask).any():
            raise PlanError("every alive broker would be demoted: none is left to lead")

    if mode not in ("leaders", "demote"):
        n_usable = int(usable.sum())
        too_big = np.flatnonzero(snap.rf > n_usable)
        if too_big.shape[0]:
            p = int(too_big[0])
            raise PlanError(
                f"partition {snap.partition_name(p)} has {int(snap.rf[p])} replicas but only "
                f"{n_usable} alive broker{'s' if n_usable != 1 else ''} can hold them"
                + (" (not counting those being removed)" if removed.any() else "")
            )
    return ModeSetup(
        mode=mode,
        usable=usable,
        dest=dest,
        leader_dest=leader_dest,
        movable=movable,
        leader_movable=leader_movable,
        removed=ids if mode == "remove-brokers" else [],
        added=ids if mode == "add-brokers" else [],
        demoted=demoted_mask if demoted_mask.any() else None,
        removed_dirs=removed_dirs,
        disk_moves={
            "full": DISK_MOVES_ALL,
            "leaders": DISK_MOVES_NONE,
            "demote": DISK_MOVES_NONE,
        }.get(mode, DISK_MOVES_NEEDED),
    )


def _in_dirs(snap: Snapshot, dirs: np.ndarray | None) -> np.ndarray:
    """(P, K) the replicas the snapshot places in `dirs`."""
    cells = snap.replicas >= 0
    if dirs is None or snap.replica_dir is None:
        return np.zeros_like(cells)
    d = snap.replica_dir
    return cells & (d >= 0) & dirs[np.maximum(snap.replicas, 0), np.maximum(d, 0)]
