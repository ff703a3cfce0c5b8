"""Planner options: goals, thresholds and switches chosen per request."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .errors import PlanError

DEFAULT_BALANCE_THRESHOLD = 1.10  # Cruise Control's default: max within 110 % of the mean
DEFAULT_CAPACITY_THRESHOLD = 0.80  # a broker may use at most 80 % of a capacity
DEFAULT_MAX_REPLICAS_PER_BROKER = 10_000  # Cruise Control's max.replicas.per.broker
# Goals whose default differs from balance_threshold, as in Cruise Control: per-topic
# counts are so granular that CC's topic.replica.count.balance.threshold is 3.00.
GOAL_DEFAULT_THRESHOLDS = {"topic-replica-distribution": 3.0}


@dataclass(frozen=True)
class PlannerOptions:
    """What to optimise and how strictly.

    goals: soft goals to optimise, in priority order (None: every soft goal, default
        order). Hard goals always run first, whatever is listed.
    balance_threshold: default threshold of every distribution goal (>= 1.0) but
        topic-replica-distribution, whose default is Cruise Control's 3.0.
    thresholds: per-goal override, e.g. {"network-in-distribution": 1.05}.
    capacity_threshold: share of a capacity a broker may use (0 < x <= 1).
    max_replicas_per_broker: hard cap on replicas per broker.
    allow_data_loss: re-create partitions whose every replica is on dead brokers.
    demoted: broker ids that lead nothing another replica can lead, whatever the mode
        (a demotion that holds; the `demote` mode adds its own brokers).
    """

    goals: tuple[str, ...] | None = None
    balance_threshold: float = DEFAULT_BALANCE_THRESHOLD
    thresholds: Mapping[str, float] = field(default_factory=dict)
    capacity_threshold: float = DEFAULT_CAPACITY_THRESHOLD
    max_replicas_per_broker: int = DEFAULT_MAX_REPLICAS_PER_BROKER
    allow_data_loss: bool = False
    demoted: tuple[int, ...] = ()

    def validate(self) -> None:
        if not self.balance_threshold >= 1.0:
            raise PlanError(f"balance threshold must be >= 1.0, got {self.balance_threshold}")
        for name, value in self.thresholds.items():
            if not value >= 1.0:
                raise PlanError(f"threshold of goal {name} must be >= 1.0, got {value}")
        if not 0.0 < self.capacity_threshold <= 1.0:
            raise PlanError(f"capacity threshold must be in (0, 1], got {self.capacity_threshold}")
        if self.max_replicas_per_broker < 1:
            raise PlanError(
                f"max replicas per broker must be >= 1, got {self.max_replicas_per_broker}"
            )

    def threshold_for(self, goal: str) -> float:
        if goal in self.thresholds:
            return float(self.thresholds[goal])
        return float(GOAL_DEFAULT_THRESHOLDS.get(goal, self.balance_threshold))
