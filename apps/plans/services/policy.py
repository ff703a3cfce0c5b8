"""A cluster's balancing policy: read (created with the defaults on first use),
validated and changed with an audited before/after."""

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from apps.audit.services import SystemActor, audit_record
from apps.balancer import engine
from apps.clusters.models import Cluster
from apps.core.bounds import BROKER_ID_MAX, MAX_MOVES_MAX, THROTTLE_BYTES_PER_SEC_MAX

from ..actions import PolicyAction
from ..errors import PlanRequestInvalid
from ..models import ClusterPolicy
from .permissions import permission_require

POLICY_FIELDS = (
    "detection_enabled",
    "detection_interval",
    "dead_broker_grace",
    "goals",
    "balance_threshold",
    "balance_target",
    "goal_thresholds",
    "topics_include",
    "topics_exclude",
    "excluded_brokers",
    "auto_approve_self_healing",
    "auto_approve_max_bytes",
    "four_eyes",
    "throttle_bytes_per_sec",
    "throttle_auto",
    "max_moves_per_broker",
    "max_moves_cluster",
)


def policy_get(*, cluster: Cluster) -> ClusterPolicy:
    policy, _ = ClusterPolicy.objects.get_or_create(cluster=cluster)
    return policy


def policy_validate(*, values: dict[str, Any]) -> None:
    """Raise PlanRequestInvalid naming the first bad field."""
    goals = values.get("goals", [])
    if not isinstance(goals, list) or any(g not in engine.SOFT_GOALS for g in goals):
        raise PlanRequestInvalid(f"goals: use soft goals among {', '.join(engine.SOFT_GOALS)}")
    thresholds = values.get("goal_thresholds", {})
    if not isinstance(thresholds, dict):
        raise PlanRequestInvalid("goal_thresholds: must map goal names to numbers")
    for name, value in thresholds.items():
        if name not in engine.ALL_GOALS or not isinstance(value, int | float) or value < 1.0:
            raise PlanRequestInvalid(
                f"goal_thresholds: {name!r} needs a known goal and a value >= 1.0"
            )
    if values.get("balance_threshold", 1.1) < 1.0:
        raise PlanRequestInvalid("balance_threshold: must be >= 1.0")
    if values.get("balance_target", 1.05) < 1.0:
        raise PlanRequestInvalid("balance_target: must be >= 1.0")
    for field in ("topics_include", "topics_exclude"):
        patterns = values.get(field, [])
        if not isinstance(patterns, list) or not all(isinstance(p, str) and p for p in patterns):
            raise PlanRequestInvalid(f"{field}: must be a list of topic name patterns")
    brokers = values.get("excluded_brokers", [])
    if not isinstance(brokers, list) or not all(
        type(b) is int and 0 <= b <= BROKER_ID_MAX for b in brokers
    ):
        raise PlanRequestInvalid("excluded_brokers: must be a list of broker ids")
    for field in ("max_moves_per_broker", "max_moves_cluster", "detection_interval"):
        if field in values and int(values[field]) < 1:
            raise PlanRequestInvalid(f"{field}: must be at least 1")
    for field in ("max_moves_per_broker", "max_moves_cluster"):
        if field in values and int(values[field]) > MAX_MOVES_MAX:
            raise PlanRequestInvalid(f"{field}: must be at most {MAX_MOVES_MAX}")
    if values.get("throttle_bytes_per_sec", 0) < 0:
        raise PlanRequestInvalid("throttle_bytes_per_sec: must be >= 0 (0: no throttle)")
    if values.get("throttle_bytes_per_sec", 0) > THROTTLE_BYTES_PER_SEC_MAX:
        raise PlanRequestInvalid(
            f"throttle_bytes_per_sec: must be at most {THROTTLE_BYTES_PER_SEC_MAX}"
        )
    max_bytes = values.get("auto_approve_max_bytes")
    if max_bytes is not None and max_bytes < 0:
        raise PlanRequestInvalid("auto_approve_max_bytes: must be >= 0")


def policy_update(
    *,
    policy: ClusterPolicy,
    actor: AbstractBaseUser | SystemActor,
    changes: dict[str, Any],
    reason: str = "",
    client_address: str | None = None,
) -> ClusterPolicy:
    """Change some policy fields; audited with before/after of what changed."""
    if isinstance(actor, AbstractBaseUser):
        permission_require(
            user=actor,
            perm="plans.change_clusterpolicy",
            what="change cluster policies",
            cluster=policy.cluster,
        )
    unknown = sorted(set(changes) - set(POLICY_FIELDS))
    if unknown:
        raise PlanRequestInvalid(f"unknown policy field {unknown[0]!r}")
    merged = {f: getattr(policy, f) for f in POLICY_FIELDS} | changes
    policy_validate(values=merged)
    before = {f: getattr(policy, f) for f in changes if getattr(policy, f) != changes[f]}
    if not before:
        return policy
    after = {f: changes[f] for f in before}
    with transaction.atomic():
        for field, value in after.items():
            setattr(policy, field, value)
        policy.save()
        audit_record(
            actor=actor,
            action=PolicyAction.CHANGED,
            obj=policy,
            before=before,
            after=after,
            reason=reason,
            client_address=client_address,
        )
    return policy
