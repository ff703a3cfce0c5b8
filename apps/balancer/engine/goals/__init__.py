"""Goals, one unit each, and their default priority order.

Hard goals always run first, in HARD_GOALS order; a request picks and orders the
soft goals. Names follow Cruise Control's goals in kebab case.
"""

from __future__ import annotations

from ..errors import PlanError
from ..measures import DISK, NW_IN, NW_OUT
from ..options import PlannerOptions
from .band import BandGoal
from .capacity import CapacityGoal
from .dead_brokers import DeadBrokersGoal
from .demoted_brokers import DemotedBrokersGoal
from .goal import Goal
from .intra_broker_disk_capacity import IntraBrokerDiskCapacityGoal
from .intra_broker_disk_usage_distribution import IntraBrokerDiskUsageDistributionGoal
from .intra_broker_leader_bytes_in_distribution import IntraBrokerLeaderBytesInDistributionGoal
from .leader_bytes_in_distribution import LeaderBytesInDistributionGoal
from .leader_distribution import LeaderDistributionGoal
from .max_replicas import MaxReplicasGoal
from .rack_awareness import RackAwarenessGoal
from .replica_distribution import ReplicaDistributionGoal
from .resource_distribution import ResourceDistributionGoal
from .topic_replica_distribution import TopicReplicaDistributionGoal

HARD_GOALS = (
    "dead-brokers",
    "rack-awareness",
    "max-replicas",
    "disk-capacity",
    "network-in-capacity",
    "network-out-capacity",
    "intra-broker-disk-capacity",
)
SOFT_GOALS = (
    "replica-distribution",
    "disk-distribution",
    "network-in-distribution",
    "network-out-distribution",
    "topic-replica-distribution",
    "leader-distribution",
    "leader-bytes-in-distribution",
    "intra-broker-disk-usage-distribution",
    "intra-broker-leader-bytes-in-distribution",
)
# Goals on the log dirs of each broker (JBOD): they run after every broker-level goal
# and pass, and only on snapshots that list dirs.
DISK_GOALS = (
    "intra-broker-disk-capacity",
    "intra-broker-disk-usage-distribution",
    "intra-broker-leader-bytes-in-distribution",
)
ALL_GOALS = HARD_GOALS + SOFT_GOALS
# The hard goal a demotion adds, right after dead-brokers (demoted_brokers.py).
DEMOTION_GOAL = "demoted-brokers"
# Goals the final leadership pass runs again, by reordering replica lists only.
LEADERSHIP_GOALS = (
    "network-out-distribution",
    "leader-distribution",
    "leader-bytes-in-distribution",
)


def make_goal(name: str, options: PlannerOptions) -> Goal:
    t = options.threshold_for(name)
    cap = options.capacity_threshold
    factories = {
        "dead-brokers": lambda: DeadBrokersGoal(options.allow_data_loss),
        DEMOTION_GOAL: DemotedBrokersGoal,
        "rack-awareness": RackAwarenessGoal,
        "max-replicas": lambda: MaxReplicasGoal(options.max_replicas_per_broker),
        "disk-capacity": lambda: CapacityGoal(DISK, cap),
        "network-in-capacity": lambda: CapacityGoal(NW_IN, cap),
        "network-out-capacity": lambda: CapacityGoal(NW_OUT, cap),
        "replica-distribution": lambda: ReplicaDistributionGoal(t),
        "disk-distribution": lambda: ResourceDistributionGoal(DISK, t),
        "network-in-distribution": lambda: ResourceDistributionGoal(NW_IN, t),
        "network-out-distribution": lambda: ResourceDistributionGoal(NW_OUT, t),
        "topic-replica-distribution": lambda: TopicReplicaDistributionGoal(t),
        "leader-distribution": lambda: LeaderDistributionGoal(t),
        "leader-bytes-in-distribution": lambda: LeaderBytesInDistributionGoal(t),
        "intra-broker-disk-capacity": lambda: IntraBrokerDiskCapacityGoal(cap),
        "intra-broker-disk-usage-distribution": lambda: IntraBrokerDiskUsageDistributionGoal(t),
        "intra-broker-leader-bytes-in-distribution": lambda: (
            IntraBrokerLeaderBytesInDistributionGoal(
                t, options.threshold_for("intra-broker-disk-usage-distribution")
            )
        ),
    }
    factory = factories.get(name)
    if factory is None:
        raise PlanError(f"unknown goal {name!r} (known: {', '.join(ALL_GOALS)})")
    return factory()


def build_goals(
    soft: tuple[str, ...] | list[str],
    options: PlannerOptions,
    *,
    demoted: bool = False,
    disks: bool = False,
) -> list[Goal]:
    """Hard goals in their fixed order (with `demoted-brokers` after `dead-brokers`
    while brokers are demoted), then the requested soft goals in order, but those on
    dirs in the order of DISK_GOALS; the goals on each broker's dirs only when the
    snapshot lists dirs (`disks`)."""
    seen: set[str] = set()
    names = list(HARD_GOALS)
    if demoted:
        names.insert(1, DEMOTION_GOAL)
    for name in soft:
        if name in HARD_GOALS:
            continue  # always there, always first
        if name not in SOFT_GOALS:
            raise PlanError(f"unknown goal {name!r} (known: {', '.join(ALL_GOALS)})")
        if name in seen:
            raise PlanError(f"goal {name!r} is listed twice")
        seen.add(name)
        names.append(name)
    for name in options.thresholds:
        if name not in ALL_GOALS:
            raise PlanError(f"threshold given for unknown goal {name!r}")
    # the goals on dirs keep their own order in their slots: the leaders' goal keeps
    # the usage band, while the usage goal knows nothing of leaders
    on_dirs = iter([n for n in DISK_GOALS if n in names])
    names = [next(on_dirs) if n in DISK_GOALS else n for n in names]
    return [make_goal(n, options) for n in names if disks or n not in DISK_GOALS]


def build_leadership_pass(options: PlannerOptions) -> list[BandGoal]:
    """The leadership goals every mode ends with (BALANCING.md §5), in the requested
    order; none that a request choosing its soft goals left out."""
    names = options.goals if options.goals is not None else LEADERSHIP_GOALS
    goals = []
    for name in names:
        if name in LEADERSHIP_GOALS:
            g = make_goal(name, options)
            assert isinstance(g, BandGoal)
            g.leadership_only = True
            goals.append(g)
    return goals


__all__ = [
    "DISK_GOALS",
    "LEADERSHIP_GOALS",
    "ALL_GOALS",
    "HARD_GOALS",
    "SOFT_GOALS",
    "BandGoal",
    "Goal",
    "build_goals",
    "build_leadership_pass",
    "make_goal",
]
