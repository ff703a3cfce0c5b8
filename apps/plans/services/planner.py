"""The bridge to the balancing engine: a cluster's policy (and its demoted brokers)
becomes the planner's options, and the engine's refusal becomes an operator-facing
error."""

import dataclasses
from collections.abc import Iterable

from apps.balancer import engine

from ..errors import PlanRequestInvalid
from ..models import ClusterPolicy
from ..selectors import ScopedSnapshot, demoted_broker_ids


def planner_options(
    *, policy: ClusterPolicy, allow_data_loss: bool = False, aim_at_target: bool = False
) -> engine.PlannerOptions:
    """The policy as engine options. `aim_at_target`: balance to the policy's target
    instead of its threshold, every threshold's margin over 1.0 shrunk alike (1.10
    -> 1.05 halves them), so a plan does not end just inside the threshold."""
    goals = tuple(policy.goals) if policy.goals else None
    threshold = float(policy.balance_threshold)
    thresholds = {g: float(t) for g, t in (policy.goal_thresholds or {}).items()}
    target = float(policy.balance_target)
    if aim_at_target and 1.0 <= target < threshold:
        shrink = (target - 1.0) / (threshold - 1.0)
        thresholds = {g: 1.0 + (t - 1.0) * shrink for g, t in thresholds.items()}
        threshold = target
    return engine.PlannerOptions(
        goals=goals,
        balance_threshold=threshold,
        thresholds=thresholds,
        allow_data_loss=allow_data_loss,
    )


def planner_run(
    *,
    scoped: ScopedSnapshot,
    policy: ClusterPolicy,
    mode: str,
    brokers: Iterable[int] = (),
    disks: Iterable[tuple[int, str]] = (),
    allow_data_loss: bool = False,
    aim_at_target: bool = False,
) -> engine.Proposal:
    options = planner_options(
        policy=policy, allow_data_loss=allow_data_loss, aim_at_target=aim_at_target
    )
    # every plan keeps leadership off the demoted brokers it knows
    in_snapshot = {b.id for b in scoped.snapshot.brokers}
    demoted = demoted_broker_ids(cluster=policy.cluster) & in_snapshot
    if demoted:
        options = dataclasses.replace(options, demoted=tuple(sorted(demoted)))
    try:
        return engine.propose(
            scoped.snapshot, mode=mode, brokers=list(brokers), options=options, disks=list(disks)
        )
    except engine.BalancerError as exc:
        raise PlanRequestInvalid(f"the planner refused: {exc}") from exc
