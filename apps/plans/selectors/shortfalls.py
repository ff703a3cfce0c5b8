"""What a plan leaves undone (hard goals unmet, partitions unplaced), as its report
states it: read, never re-judged (docs/BALANCING.md §8, docs/lifecycle.md scope)."""

from dataclasses import dataclass, field

from ..models import Plan

# why a partition whose every replica is on dead brokers stays where it is
DATA_LOSS_REASON = "every replica is on a dead broker; healing it would lose its data"
# why the plan's snapshot left a partition out (snapshot_build: RF above alive brokers)
RF_REASON = "more replicas than alive brokers to hold them; left out of the plan"


@dataclass(frozen=True)
class UnmetHardGoal:
    name: str
    violation_before: float
    violation_after: float
    offenders: int
    worst: str | None


@dataclass(frozen=True)
class UnplacedPartition:
    partition: str
    reason: str


@dataclass(frozen=True)
class PlanShortfalls:
    unmet_hard_goals: list[UnmetHardGoal] = field(default_factory=list)
    unplaced_partitions: list[UnplacedPartition] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.unmet_hard_goals or self.unplaced_partitions)


def plan_shortfalls_get(*, plan: Plan, report: dict | None = None) -> PlanShortfalls:
    """From the plan's report, or the part of it given (see plan_report_summary)."""
    # plans proposed before the report carried these keys simply show none
    report = (plan.report if report is None else report) or {}
    goals = [
        UnmetHardGoal(
            name=g["name"],
            violation_before=float(g["violation_before"]),
            violation_after=float(g["violation_after"]),
            offenders=int(g["offenders"]),
            worst=g.get("worst"),
        )
        for g in report.get("unmet_hard_goals") or []
    ]
    unplaced = (
        [
            UnplacedPartition(partition=name, reason=RF_REASON)
            for name in report.get("unplaceable") or []
        ]
        + [
            UnplacedPartition(partition=u["partition"], reason=u["reason"])
            for u in report.get("unfixable") or []
        ]
        + [
            UnplacedPartition(partition=name, reason=DATA_LOSS_REASON)
            for name in (report.get("data_loss") or {}).get("skipped") or []
        ]
    )
    return PlanShortfalls(unmet_hard_goals=goals, unplaced_partitions=unplaced)
