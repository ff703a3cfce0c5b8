"""Cluster state: the assignment, per-broker loads (measures.py), active constraints.

Every move goes through `move_replica` / `move_leader`, which keep the per-broker
loads, per-topic replica counts and the record of why a partition changed in step.
The acceptance checks (`move_dest_mask`, `leader_move_ok`, `swap_ok`) enforce every
constraint registered so far: hard goals from the start, soft goals once optimised.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .disks import DiskModel
from .measures import (
    DISK,
    LEADER_BYTES_IN,
    LEADER_MEASURES,
    N_MEASURES,
    NW_IN,
    NW_OUT,
    REPLICAS,
    broker_loads,
    load_vectors,
)
from .racks import rack_codes, rack_limits
from .snapshot import Snapshot


@dataclass
class GoalCounters:
    replica_moves: int = 0
    leader_moves: int = 0
    swaps: int = 0


@dataclass
class ModeSetup:
    """What a mode lets the optimiser touch (see modes.py)."""

    mode: str
    usable: np.ndarray  # (B,) may hold replicas after the plan: alive and not being removed
    dest: np.ndarray  # (B,) may receive new replicas
    leader_dest: np.ndarray  # (B,) may receive leadership
    movable: np.ndarray  # (P, K) replica slots the mode lets move
    leader_movable: np.ndarray  # (P,) partitions whose leadership the mode lets change
    removed: list[int] = field(default_factory=list)  # broker indices being removed
    added: list[int] = field(default_factory=list)  # broker indices being added
    # (B,) brokers demoted: they lead nothing a plan can give to another (None: none)
    demoted: np.ndarray | None = None
    # (B, D) log dirs being removed (remove-disks; None: none)
    removed_dirs: np.ndarray | None = None
    # which replicas the intra-broker goals may move between dirs (disks.py)
    disk_moves: str = "needed"


# the measures by which `place_score` places a replica
PLACED = slice(NW_IN, REPLICAS + 1)
assert (NW_IN, NW_OUT, DISK, REPLICAS) == tuple(range(NW_IN, REPLICAS + 1))

# stale brokers past which room and slack are computed whole: fewer numpy calls
SETTLE_ROWS = 4


class ClusterModel:
    """Mutable cluster state: assignment, per-broker loads and active constraints."""

    def __init__(
        self,
        snap: Snapshot,
        setup: ModeSetup,
        *,
        capacity_threshold: float,
        max_replicas_per_broker: int,
    ) -> None:
        self.snap = snap
        self.setup = setup
        self.n_brokers = snap.n_brokers
        self.n_partitions = snap.n_partitions
        self._init_assignment(snap)
        self._init_mode(snap, setup)
        self._init_racks(snap)
        self._init_norm(snap)
        self._init_constraints(
            capacity_threshold=capacity_threshold, max_replicas_per_broker=max_replicas_per_broker
        )
        self._init_place_target()
        self._init_bookkeeping()

    def _init_assignment(self, snap: Snapshot) -> None:
        """The assignment, its per-broker loads and per-topic replica counts."""
        B = self.n_brokers
        self.initial = snap.replicas
        self.assign = snap.replicas.copy()
        self.K = self.assign.shape[1]
        self.rf = snap.rf
        self.rf_l: list[int] = snap.rf.tolist()
        self.topic = snap.topic
        self.topic_l: list[int] = snap.topic.tolist()
        self.size = snap.size
        fvec, lvec = load_vectors(snap)
        self.lout = lvec[:, NW_OUT].copy()  # contiguous: goals index it per partition
        self.fvec = fvec
        self.lvec = lvec
        self.load = broker_loads(self.assign, fvec, lvec, B)

        n_topics = len(snap.topics)
        self.n_topics = n_topics
        cells = self.assign >= 0
        key = snap.topic[:, None].astype(np.int64) * B + self.assign
        self.topic_count = (
            np.bincount(key[cells], minlength=n_topics * B).reshape(n_topics, B).astype(np.int32)
        )
        # each topic's replicas over all brokers: no move changes it
        self.topic_total = self.topic_count.sum(axis=1)

    def _init_mode(self, snap: Snapshot, setup: ModeSetup) -> None:
        """What the mode lets move, where to, and the partitions nothing may touch."""
        self.usable = setup.usable
        self.alive = snap.alive
        self.dest = setup.dest & setup.usable
        # the same as plain lists (neither changes after setup): `dest_fits` reads
        # them per broker, where a list item costs less than an array's
        self.usable_l: list[bool] = self.usable.tolist()
        self.dest_l: list[bool] = self.dest.tolist()
        self.demoted = (
            np.zeros(snap.n_brokers, dtype=bool) if setup.demoted is None else setup.demoted
        )
        # the brokers leadership is shared among: the measures leadership carries are
        # balanced over them, a demoted broker being meant to carry none
        self.leading = self.usable & ~self.demoted
        self.leader_dest = setup.leader_dest & self.leading
        self.movable = setup.movable.copy()
        self.leader_movable = setup.leader_movable
        self.n_usable = int(self.usable.sum())
        # a partition holding a replica on a dead broker may not be listed in a plan
        # (BALANCING.md §2), so nothing touches it unless every dead replica is moved
        cells = self.assign >= 0
        dead_cell = (~snap.alive)[np.maximum(self.assign, 0)] & cells
        self.frozen = dead_cell.any(axis=1)

    def _init_racks(self, snap: Snapshot) -> None:
        """Each broker's rack code, its rack masks, each partition's replicas per rack."""
        rack, n_codes = rack_codes(snap.racks)
        self.rack = rack
        self.rack_l: list[int] = rack.tolist()
        self.rack_masks = rack[None, :] == np.arange(n_codes)[:, None]
        self.rack_outside = ~self.rack_masks  # brokers outside each rack
        self.n_racks_usable = int(np.unique(rack[self.usable]).shape[0])
        self.rack_max = rack_limits(snap.rf, self.n_racks_usable)
        self.rack_max_l: list[int] = self.rack_max.tolist()

    def _init_norm(self, snap: Snapshot) -> None:
        """Normalisation: capacity where every usable broker declares one, else raw load."""
        norm = np.ones((self.n_brokers, N_MEASURES), dtype=np.float64)
        self.has_capacity = [False] * 3
        for j in (NW_IN, NW_OUT, DISK):
            cap = snap.capacity[:, j]
            if self.n_usable and np.all(np.isfinite(cap[self.usable]) & (cap[self.usable] > 0)):
                norm[:, j] = np.where(np.isfinite(cap) & (cap > 0), cap, 1.0)
                self.has_capacity[j] = True
        if self.has_capacity[NW_IN]:
            norm[:, LEADER_BYTES_IN] = norm[:, NW_IN]
        self.norm = norm

    def _init_constraints(self, *, capacity_threshold: float, max_replicas_per_broker: int) -> None:
        """Active constraints: hi/lo per broker and measure, checked as "never worse"."""
        B = self.n_brokers
        self.hi = np.full((B, N_MEASURES), np.inf)
        self.lo = np.full((B, N_MEASURES), -np.inf)
        self.capacity_threshold = capacity_threshold
        self.max_replicas_per_broker = max_replicas_per_broker
        self.topic_hi: np.ndarray | None = None
        self.topic_lo: np.ndarray | None = None
        # room[b] = max(hi - load, 0): how much each measure may still grow on b
        # slack[b] = max(load - lo, 0): how much it may still shrink ("never worse")
        # column-major: a test of one replica against every broker reduces over the
        # measures fastest this way, and `tighten` writes whole columns
        self._room = np.full((N_MEASURES, B), np.inf).T
        self._slack = np.full((N_MEASURES, B), np.inf).T
        # brokers whose load changed since their rows of room and slack were last
        # computed: a move only lists them, as most moves are tested without either
        # (`move_dest_test`), and the rows are computed when read
        self._stale: set[int] = set()
        self._zero_row = np.zeros(N_MEASURES)

    def _init_place_target(self) -> None:
        """The whole-cluster targets by which replicas that must move anyway are placed."""
        totals = self.fvec.sum(axis=0) + self.lvec.sum(axis=0)
        norm = self.norm
        usable_norm = norm[self.usable].sum(axis=0) if self.n_usable else np.ones(N_MEASURES)
        target = totals[None, :] * norm / np.where(usable_norm > 0, usable_norm, 1.0)
        self.place_target = np.where(target > 0, target, np.inf)
        # `place_score`'s measures by broker, a row each: its reduction then runs
        # along contiguous rows
        self._place_target_rows = np.ascontiguousarray(self.place_target[:, PLACED].T)

    def disks_follow(self) -> None:
        """Each replica's log dir on the assignment as it stands (disks.py): those
        that stayed on their broker keep their dir; arrivals have none yet. Before
        anything moves, each dir's bytes and leader bytes in are kept for the
        report (`disks_start`)."""
        if self.snap.log_dir_total is None:
            return
        self.disks = DiskModel(
            self.snap,
            self.assign.copy(),
            removed=self.setup.removed_dirs,
            capacity_threshold=self.capacity_threshold,
            moves=self.setup.disk_moves,
        )
        if self._changes == 0 and self.disks_start is None:
            self.disks_start = (self.disks.used.copy(), self.disks.lead.copy())

    def _init_bookkeeping(self) -> None:
        """Why each partition changed, moves per goal, the journal of a trial."""
        self.reasons: dict[int, list[str]] = {}
        self.counters: dict[str, GoalCounters] = {}
        self.journal: list[tuple] | None = None
        # the partitions each broker leads, sorted; built on first use (`led_by`)
        self._led: list[np.ndarray] | None = None
        # changes to `assign` so far: every replica move, leader move and follower swap
        self._changes = 0
        # `replicas_by_broker`'s last index and the `_changes` it was built at
        self._by_broker: tuple[int, tuple[np.ndarray, np.ndarray]] | None = None
        # each change's partition, in order, from the first `changes_mark` on (None
        # until then): what a caller keeping its own summaries must bring up to date
        self._log: array | None = None
        # each replica's log dir (JBOD), set by the optimiser when the snapshot lists dirs
        self.disks: DiskModel | None = None
        # (used, lead) of the dirs on the starting assignment (`disks_follow`)
        self.disks_start: tuple[np.ndarray, np.ndarray] | None = None
        self.data_loss_skipped: list[int] = []
        self.data_loss_healed: list[int] = []
        self.unfixable: dict[int, str] = {}
        self.trimmed = 0  # replica moves the final movement pass gave back (trim.py)
        self.polished = 0  # moves the polish pass made (polish.py)

    # ---------------------------------------------------------------- helpers
    def members(self, p: int) -> list[int]:
        return self.assign[p, : self.rf_l[p]].tolist()

    def replica_vec(self, p: int, k: int) -> np.ndarray:
        return self.fvec[p] + self.lvec[p] if k == 0 else self.fvec[p]

    def replicas_by_broker(self) -> tuple[np.ndarray, np.ndarray]:
        """Index of replica cells grouped by broker: (cell order, start offsets)."""
        cached = self._by_broker
        if cached is not None and cached[0] == self._changes:  # nothing moved since
            return cached[1]
        flat = self.assign.ravel()
        # int16 keys let numpy use a linear-time radix sort
        keys = flat.astype(np.int16) if self.n_brokers < 32000 else flat
        order = np.argsort(keys, kind="stable")
        n_pad = int((flat < 0).sum())
        counts = np.bincount(flat[flat >= 0], minlength=self.n_brokers)
        starts = np.concatenate(([0], np.cumsum(counts))) + n_pad
        self._by_broker = (self._changes, (order, starts))
        return order, starts

    def cells_of(
        self, index: tuple[np.ndarray, np.ndarray], b: int
    ) -> tuple[np.ndarray, np.ndarray]:
        order, starts = index
        cells = order[starts[b] : starts[b + 1]]
        return cells // self.K, cells % self.K

    def move_cost(self, ps: np.ndarray, s: int) -> np.ndarray:
        """Bytes that moving each partition's replica off broker s adds to the net
        plan: its size when s held it at the start, none when an earlier move put it
        there (the plan then copies it to the new broker instead, once)."""
        home = self.initial.take(ps, axis=0)  # take: several times faster than [ps]
        # slot by slot: numpy's any(axis=1) over a few columns is slow
        held = home[:, 0] == s
        for i in range(1, home.shape[1]):
            held |= home[:, i] == s
        return np.where(held, self.size[ps], 0.0)

    def place_score(self, vec: np.ndarray) -> np.ndarray:
        """Composite utilisation after adding `vec` to each broker (lower is better)."""
        # a row per measure (numpy's max(axis=1) over a few columns is slow); the
        # maximum of the same ratios is the same number in any order
        ratio = np.add(self.load.T[PLACED], vec[PLACED, None], order="C")
        ratio /= self._place_target_rows
        return np.maximum.reduce(ratio, axis=0)

    def changes_mark(self) -> int:
        """A mark for `changed_since`: the changes logged so far (the log starts with
        the first call)."""
        if self._log is None:
            self._log = array("q")
        return len(self._log)

    def changed_since(self, mark: int) -> np.ndarray:
        """The partition of each change since `mark` (from `changes_mark`), in order,
        repeats included: every replica move, leader move and follower swap."""
        assert self._log is not None
        return np.frombuffer(self._log[mark:], dtype=np.int64)

    def note(self, p: int, goal: str) -> None:
        # every change to `assign` is noted: the change log (`changed_since`) is kept here
        if self._log is not None:
            self._log.append(p)
        r = self.reasons.get(p)
        if r is None:
            self.reasons[p] = [goal]
        elif r[-1] != goal and goal not in r:
            r.append(goal)

    def counter(self, goal: str) -> GoalCounters:
        c = self.counters.get(goal)
        if c is None:
            c = self.counters[goal] = GoalCounters()
        return c

    # ---------------------------------------------------------------- constraints
    def tighten(self, j: int, lo: np.ndarray | None, hi: np.ndarray | None) -> None:
        if hi is not None:
            np.minimum(self.hi[:, j], hi, out=self.hi[:, j])
        if lo is not None:
            np.maximum(self.lo[:, j], lo, out=self.lo[:, j])
        self._room[:, j] = np.maximum(self.hi[:, j] - self.load[:, j], 0.0)
        self._slack[:, j] = np.maximum(self.load[:, j] - self.lo[:, j], 0.0)

    def constrain(self, j: int, lo: np.ndarray, hi: np.ndarray) -> None:
        """Replace measure j's constraint (a hard goal resetting its own band; see
        goals/capacity.py), unlike `tighten`, which only narrows."""
        self.hi[:, j] = hi
        self.lo[:, j] = lo
        self.tighten(j, None, None)

    @property
    def room(self) -> np.ndarray:
        """(B, N_MEASURES) max(hi - load, 0), column-major; read it anew after a move."""
        if self._stale:
            self._settle()
        return self._room

    @property
    def slack(self) -> np.ndarray:
        """(B, N_MEASURES) max(load - lo, 0), column-major; read it anew after a move."""
        if self._stale:
            self._settle()
        return self._slack

    def _settle(self) -> None:
        """Compute the rows of room and slack of the brokers whose load changed."""
        stale = self._stale
        if len(stale) > SETTLE_ROWS:
            np.maximum(self.hi - self.load, 0.0, out=self._room)
            np.maximum(self.load - self.lo, 0.0, out=self._slack)
        else:
            zero = self._zero_row
            for b in stale:
                lb = self.load[b]
                # written into the rows in place; a zero row costs numpy less than a 0.0
                np.maximum(self.hi[b] - lb, zero, out=self._room[b])
                np.maximum(lb - self.lo[b], zero, out=self._slack[b])
        stale.clear()

    def rack_full(self, p: int, k: int) -> tuple[list[int], bool]:
        """Racks already full for partition p without slot k, and whether moving slot k
        out of its rack lowers the partition's rack violation."""
        m = self.rack_max_l[p]
        rl = self.rack_l
        racks = [rl[b] for b in self.assign[p, : self.rf_l[p]].tolist()]
        own = racks.pop(k)
        if m <= 1:  # the usual case: every rack of another replica is full
            full = list(dict.fromkeys(racks))
            return full, own in full
        cnt: dict[int, int] = {}
        for r in racks:
            cnt[r] = cnt.get(r, 0) + 1
        full = [r for r, c in cnt.items() if c >= m]
        return full, own in full

    def may_return(self, p: int, b: int) -> bool:
        """A replica of p may always go back to a usable broker that held one at the
        start: in the net plan that broker keeps its data, nothing is copied (this is
        what lets add-brokers swap a replica back to where it came from)."""
        return bool(self.usable[b]) and b in self.initial[p, : self.rf_l[p]].tolist()

    def move_dest_mask(
        self, p: int, k: int, vec: np.ndarray | None = None, *, fix_rack: bool = False
    ) -> np.ndarray | None:
        """Brokers that may take replica slot k of partition p without breaking any
        registered constraint; None when the source side already forbids the move."""
        s = int(self.assign[p, k])
        if vec is None:
            vec = self.replica_vec(p, k)
        # count_nonzero: ndarray.any() goes through a slow Python wrapper (hot path)
        if np.count_nonzero(vec > self.slack[s]):
            return None
        t = self.topic_l[p]
        topic_lo = self.topic_lo
        # count - 1 < min(lo, count) is count - 1 < lo
        if topic_lo is not None and self.usable[s] and self.topic_count[t, s] - 1 < topic_lo[t]:
            return None
        mask = self.dest.copy()
        rf = self.rf_l[p]
        usable = self.usable
        # plain item access: the fancy-index forms cost more for a few brokers
        for b in self.initial[p, :rf].tolist():
            if usable[b]:
                mask[b] = True
        # room is column-major, so this reduction runs along contiguous columns
        mask &= np.logical_and.reduce(vec <= self.room, axis=1)
        members = self.assign[p, :rf].tolist()
        for b in members:
            mask[b] = False
        if self.rack_max_l[p] <= 1:  # `rack_full`'s usual case, inline: a hot path
            rl = self.rack_l
            full = {rl[b] for i, b in enumerate(members) if i != k}
            leaving_full = rl[members[k]] in full
        else:
            full, leaving_full = self.rack_full(p, k)
        if fix_rack or not leaving_full:
            for r in full:
                mask &= self.rack_outside[r]
        if self.topic_hi is not None:
            # counts are integers: count + 1 <= cap is count < cap
            mask &= self.topic_count[t] < max(self.topic_hi[t], 0)
        return mask

    def banned_racks(self, p: int, k: int, members: list[int]) -> list[int] | tuple[()]:
        """The racks `move_dest_test` keeps replica slot k of p out of (`members`: p's
        brokers in slot order): those already full without it, unless leaving its
        own rack lowers the partition's rack violation."""
        rl = self.rack_l
        if self.rack_max_l[p] <= 1:  # every rack of another replica is full
            full = [rl[b] for b in members]
            del full[k]
            return () if rl[members[k]] in full else full
        full, leaving_full = self.rack_full(p, k)
        return () if leaving_full else full

    def mask_pick(self, p: int, k: int, vec: np.ndarray, fit: np.ndarray, score: np.ndarray) -> int:
        """The broker of least `score` (lowest index among equals) that both
        `move_dest_mask` and `fit` allow; -1 when none. For a search whose likeliest
        brokers (`first_fit`) all failed and whose source checks passed: brokers it
        set to inf are outside the mask anyway."""
        mask = self.move_dest_mask(p, k, vec)
        assert mask is not None  # the source checks passed
        mask &= fit
        if not np.count_nonzero(mask):  # faster than mask.any() here
            return -1
        return int(np.where(mask, score, np.inf).argmin())

    def move_dest_test(
        self, p: int, k: int, vec: np.ndarray | None = None
    ) -> Callable[[int], bool] | None:
        """`move_dest_mask` one broker at a time: a test that is true exactly where the
        mask is, for callers that look at a few likely brokers before the whole mask;
        None when the source side already forbids the move."""
        rf = self.rf_l[p]
        members = self.assign[p, :rf].tolist()
        s = members[k]
        if vec is None:
            vec = self.replica_vec(p, k)
        vl = vec.tolist()
        # v > max(l - lo, 0) as slack has it, from the load, so no row is settled
        if exceeds(vl, self.load[s].tolist(), self.lo[s].tolist()):
            return None
        t = self.topic_l[p]
        topic_lo = self.topic_lo
        # count - 1 < min(lo, count) is count - 1 < lo
        if topic_lo is not None and self.usable[s] and self.topic_count[t, s] - 1 < topic_lo[t]:
            return None
        banned = self.banned_racks(p, k, members)
        cap = None if self.topic_hi is None else max(self.topic_hi[t], 0)

        def test(b: int) -> bool:
            return self.dest_fits(b, p, members, banned, cap, t, vl)

        return test

    def dest_fits(
        self,
        b: int,
        p: int,
        members: list[int],
        banned: list[int] | tuple[()],
        cap: int | None,
        t: int,
        vl: list[float],
    ) -> bool:
        """`move_dest_test`'s destination side: whether broker b may take the replica
        of p whose `replica_vec` is `vl` (`members`: p's brokers in slot order,
        `banned`: `banned_racks`, `cap`: the cap on its topic t's count per broker)."""
        return (
            # a destination, or home: usable and holding p at the start
            (self.dest_l[b] or (self.usable_l[b] and b in self.initial[p, : len(members)].tolist()))
            and b not in members
            and self.rack_l[b] not in banned
            and (cap is None or self.topic_count.item(t, b) < cap)
            and not exceeds(vl, self.hi[b].tolist(), self.load[b].tolist())
        )

    def count_full(self) -> np.ndarray:
        """(B,) brokers the replica-count constraint lets take no replica: each replica
        carries 1 of REPLICAS, so `move_dest_test` rejects them for any (the same
        float comparison, hence the same answer)."""
        return 1.0 > self.hi[:, REPLICAS] - self.load[:, REPLICAS]

    def count_spent(self, s: int) -> bool:
        """Whether the replica-count constraint lets broker s give no replica:
        `move_dest_test` is then None for each of its replicas."""
        return 1.0 > float(self.load[s, REPLICAS]) - float(self.lo[s, REPLICAS])

    def source_refuses(self, ps: np.ndarray, ks: np.ndarray) -> np.ndarray:
        """Per replica cell (ps, ks), whether its broker's side already forbids moving
        it: where `move_dest_mask` and `move_dest_test` give None, for many cells at
        once (the same comparisons, element by element)."""
        s = self.assign[ps, ks]
        # + 0.0 leaves every figure as it is, so each vector is `replica_vec`'s
        vec = self.fvec[ps] + np.where((ks == 0)[:, None], self.lvec[ps], 0.0)
        refused = (vec > self.slack[s]).any(axis=1)
        if self.topic_lo is not None:
            t = self.topic[ps]
            refused |= self.usable[s] & (self.topic_count[t, s] - 1 < self.topic_lo[t])
        return refused

    def move_ok_to(self, p: int, k: int, d: int) -> bool:
        """Scalar form of `move_dest_mask` for one destination."""
        s = int(self.assign[p, k])
        if not (self.dest[d] or self.may_return(p, d)) or d in self.members(p):
            return False
        # vec > room[d] or vec > slack[s], on plain floats: no row of either is settled
        vl = self.replica_vec(p, k).tolist()
        if exceeds(vl, self.hi[d].tolist(), self.load[d].tolist()) or exceeds(
            vl, self.load[s].tolist(), self.lo[s].tolist()
        ):
            return False
        full, leaving_full = self.rack_full(p, k)
        if not leaving_full and self.rack_l[d] in full:
            return False
        if self.topic_hi is not None and self.topic_lo is not None:
            t = self.topic_l[p]
            tc = self.topic_count
            if tc[t, d] + 1 > max(self.topic_hi[t], 0):
                return False
            if self.usable[s] and tc[t, s] - 1 < min(self.topic_lo[t], tc[t, s]):
                return False
        return True

    def leader_move_ok(self, p: int, k: int, *, force: bool = False) -> bool:
        """May leadership of p go to the replica in slot k?"""
        a = int(self.assign[p, 0])
        b = int(self.assign[p, k])
        if force:
            if not self.usable[b]:
                return False
        elif not (self.leader_dest[b] and self.leader_movable[p]):
            return False
        vec = self.lvec[p]
        return not (np.count_nonzero(vec > self.room[b]) or np.count_nonzero(vec > self.slack[a]))

    def swap_ok(self, p1: int, k1: int, p2: int, k2: int) -> bool:
        """May replica (p1, k1) on s and replica (p2, k2) on d trade places?"""
        if p1 == p2:
            return False
        s = int(self.assign[p1, k1])
        d = int(self.assign[p2, k2])
        if not (self.dest[d] or self.may_return(p1, d)):
            return False
        if not (self.dest[s] or self.may_return(p2, s)):
            return False
        if not (self.movable[p1, k1] and self.movable[p2, k2]):
            return False
        if self.frozen[p1] or self.frozen[p2]:
            return False
        if d in self.members(p1) or s in self.members(p2):
            return False
        full1, leaving1 = self.rack_full(p1, k1)
        if not leaving1 and self.rack_l[d] in full1:
            return False
        full2, leaving2 = self.rack_full(p2, k2)
        if not leaving2 and self.rack_l[s] in full2:
            return False
        net = (self.replica_vec(p1, k1) - self.replica_vec(p2, k2)).tolist()
        for b, delta in ((d, net), (s, [-x for x in net])):
            load, hi, lo = self.load[b].tolist(), self.hi[b].tolist(), self.lo[b].tolist()
            if leaves_bounds(load, delta, hi, lo):
                return False
        t1, t2 = self.topic_l[p1], self.topic_l[p2]
        if t1 != t2 and self.topic_hi is not None and self.topic_lo is not None:
            tc = self.topic_count
            for t_in, t_out, b in ((t1, t2, d), (t2, t1, s)):
                if tc[t_in, b] + 1 > max(self.topic_hi[t_in], tc[t_in, b]):
                    return False
                if tc[t_out, b] - 1 < min(self.topic_lo[t_out], tc[t_out, b]):
                    return False
        return True

    def sharing(self, j: int) -> np.ndarray:
        """The brokers measure j is balanced over: the usable ones, less the demoted for
        the measures leadership carries."""
        return self.leading if j in LEADER_MEASURES else self.usable

    def open_leadership(self) -> None:
        """Let leadership go to any usable broker not demoted, in any partition, whatever
        the mode: the final leadership pass reorders replica lists, which copies no data."""
        self.leader_dest = self.leading.copy()
        self.leader_movable = np.ones(self.n_partitions, dtype=bool)

    def led_by(self, b: int) -> np.ndarray:
        """The partitions broker b leads now, sorted (kept in step with every move, so
        the leadership goals need not scan every partition for each broker)."""
        if self._led is None:
            lead = self.assign[:, 0]
            # int16 keys let numpy use a linear-time radix sort
            if self.n_brokers < 32000:
                lead = lead.astype(np.int16)
            order = np.argsort(lead, kind="stable")
            cuts = np.searchsorted(lead[order], np.arange(self.n_brokers + 1))
            self._led = [order[cuts[x] : cuts[x + 1]] for x in range(self.n_brokers)]
        return self._led[b]

    def _lead_moved(self, p: int, a: int, b: int) -> None:
        """Partition p's leadership went from broker a to broker b."""
        if self._led is None or a == b:
            return
        # slices joined: np.delete and np.insert cost several times more per call
        was = self._led[a]
        i = int(was.searchsorted(p))
        self._led[a] = np.concatenate((was[:i], was[i + 1 :]))
        now = self._led[b]
        i = int(now.searchsorted(p))
        self._led[b] = np.concatenate((now[:i], [p], now[i:]))

    # ---------------------------------------------------------------- moves
    def move_replica(
        self, p: int, k: int, d: int, goal: str, vec: np.ndarray | None = None
    ) -> None:
        """Move replica slot k of p to broker d (`vec`: its `replica_vec`, when the
        caller has it)."""
        assign = self.assign
        s = assign.item(p, k)  # item: a plain int, read faster than assign[p, k]
        if vec is None:
            vec = self.replica_vec(p, k)
        # the rows in place: `load[s] -= vec` would also write the row back onto itself
        at = self.load[s]
        at -= vec
        at = self.load[d]
        at += vec
        stale = self._stale
        stale.add(s)
        stale.add(d)
        t = self.topic_l[p]
        tc = self.topic_count
        tc[t, s] -= 1
        tc[t, d] += 1
        assign[p, k] = d
        self._changes += 1
        if k == 0:
            self._lead_moved(p, s, d)
        if self.frozen[p] or not self.alive[d]:  # d dead only when a rollback moves back
            self.frozen[p] = not bool(self.alive[self.assign[p, : self.rf_l[p]]].all())
        if self.journal is not None:
            self.journal.append(("r", p, k, s, goal))
        self.note(p, goal)
        c = self.counters.get(goal)  # `counter`, inline: a hot path
        if c is None:
            c = self.counter(goal)
        c.replica_moves += 1

    def move_leader(self, p: int, k: int, goal: str) -> None:
        row = self.assign[p]
        a = int(row[0])
        b = int(row[k])
        vec = self.lvec[p]
        at = self.load[a]  # the rows in place, as in `move_replica`
        at -= vec
        at = self.load[b]
        at += vec
        stale = self._stale
        stale.add(a)
        stale.add(b)
        row[0], row[k] = b, a
        self._changes += 1
        self._lead_moved(p, a, b)
        mv = self.movable[p]
        mv[0], mv[k] = mv[k], mv[0]
        if self.journal is not None:
            self.journal.append(("l", p, k, 0, goal))
        self.note(p, goal)
        self.counter(goal).leader_moves += 1

    def swap_followers(self, p: int, k1: int, k2: int, goal: str) -> None:
        """Swap two followers' places in p's replica list: the order Kafka elects them
        in when the leader fails; no load moves."""
        assert k1 > 0 and k2 > 0
        a = self.assign
        a[p, k1], a[p, k2] = a[p, k2], a[p, k1]
        self._changes += 1
        mv = self.movable
        mv[p, k1], mv[p, k2] = mv[p, k2], mv[p, k1]
        if self.journal is not None:
            self.journal.append(("f", p, k1, k2, goal))
        self.note(p, goal)

    def begin(self) -> None:
        self.journal = []

    def commit(self) -> None:
        self.journal = None

    def rollback(self) -> None:
        """Undo every move since `begin` (used when a partition can't be fully fixed)."""
        journal, self.journal = self.journal or [], None
        for kind, p, k, s, goal in reversed(journal):
            c = self.counter(goal)
            if kind == "r":
                self.move_replica(p, k, s, goal)
                c.replica_moves -= 2
            elif kind == "f":
                self.swap_followers(p, k, s, goal)
            else:
                self.move_leader(p, k, goal)
                c.leader_moves -= 2
            r = self.reasons.get(p)
            if r is not None and (self.assign[p] == self.initial[p]).all():
                del self.reasons[p]

    # what only the goals' search reads; the plan and the report read none of it
    SEARCH_STATE = (
        "topic_l",
        "topic_count",
        "rf_l",
        "rack_max_l",
        "rack_max",
        "_led",
        "movable",
        "leader_movable",
        "frozen",
        "_by_broker",
        "_log",
    )

    def release_search_state(self) -> None:
        """Drop what only the search reads, once it is over, so it does not sit beside
        the plan and the report at the peak of memory. No goal can run after this."""
        for name in self.SEARCH_STATE:
            setattr(self, name, None)


def exceeds(vec: list[float], upper: list[float], lower: list[float]) -> bool:
    """Whether any of `vec` exceeds max(upper - lower, 0) on its measure: the test
    `np.count_nonzero(vec > room[b])` with upper, lower = hi[b], load[b] (`slack[s]`
    with load[s], lo[s]), on plain floats (numpy costs more for a few measures)."""
    for v, u, lb in zip(vec, upper, lower, strict=True):
        if v > 0.0 and v > u - lb:
            return True
    return False


def floor_refuses(vec: list[float], floored: list[int], load: list[float], lo: list[float]) -> bool:
    """`exceeds(vec, load, lo)` over the measures `floored` only: a source's measures
    without a floor (lo -inf) never refuse (load - -inf is inf, or NaN)."""
    for m in floored:
        v = vec[m]
        if v > 0.0 and v > load[m] - lo[m]:
            return True
    return False


def leaves_bounds(
    cur: list[float], delta: list[float], upper: list[float], lower: list[float]
) -> bool:
    """Whether cur + delta goes above max(upper, cur) or below min(lower, cur) on any
    measure: numpy's `(new > np.maximum(upper, cur)).any() or (new <
    np.minimum(lower, cur)).any()` on plain floats (numpy costs more for a few
    measures); a NaN fails each comparison in both forms."""
    for c, dv, u, lo in zip(cur, delta, upper, lower, strict=True):
        new = c + dv
        if (new > u and new > c) or (new < lo and new < c):
            return True
    return False


FIRST_FIT_TRIES = 4  # likeliest destinations tested one by one before a whole mask


def first_fit(score: np.ndarray, fits: Callable[[int], bool]) -> int:
    """The broker of least score (lowest index among equals) that `fits`, looking at
    the FIRST_FIT_TRIES likeliest only; -1 when none of them does. Each broker found
    unfit gets score inf, in place: a mask that leaves it out then picks the same."""
    for _ in range(FIRST_FIT_TRIES):
        b = int(score.argmin())
        if score[b] == np.inf:
            return -1  # every broker left scores inf: argmin tells none apart
        if fits(b):
            return b
        score[b] = np.inf
    return -1
