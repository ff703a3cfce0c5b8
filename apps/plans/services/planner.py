"""The bridge to the balancing engine: a cluster's policy becomes the planner's
options, and the engine's refusal becomes an operator-facing error."""

from collections.abc import Iterable

from apps.balancer import engine

from ..errors import PlanRequestInvalid
from ..models import ClusterPolicy
from ..selectors import ScopedSnapshot


def planner_options(
    *, policy: ClusterPolicy, allow_data_loss: bool = False
) -> engine.PlannerOptions:
    goals = tuple(policy.goals) if policy.goals else None
    return engine.PlannerOptions(
        goals=goals,
        balance_threshold=float(policy.balance_threshold),
        thresholds=dict(policy.goal_thresholds or {}),
        allow_data_loss=allow_data_loss,
    )


def planner_run(
    *,
    scoped: ScopedSnapshot,
    policy: ClusterPolicy,
    mode: str,
    brokers: Iterable[int] = (),
    allow_data_loss: bool = False,
) -> engine.Proposal:
    try:
        return engine.propose(
            scoped.snapshot,
            mode=mode,
            brokers=list(brokers),
            options=planner_options(policy=policy, allow_data_loss=allow_data_loss),
        )
    except engine.BalancerError as exc:
        raise PlanRequestInvalid(f"the planner refused: {exc}") from exc
