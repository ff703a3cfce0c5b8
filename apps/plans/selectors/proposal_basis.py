"""What a proposal was made for: the cluster as the planner saw it, minus its loads.

An open proposal stays valid while its basis holds (services/proposal_hold.py); the
loads are left out on purpose, since every load window differs a little from the
last and a proposal that followed them would never hold still.
"""

import hashlib
from typing import Any

from apps.balancer.engine import ClusterSnapshot

from ..models import ClusterPolicy

# The policy fields a plan depends on; bookkeeping and execution caps are left out.
POLICY_PLANNING_FIELDS = (
    "goals",
    "balance_threshold",
    "balance_target",
    "goal_thresholds",
    "topics_include",
    "topics_exclude",
    "excluded_brokers",
)


def policy_fingerprint(*, policy: ClusterPolicy) -> str:
    values = [repr(getattr(policy, name)) for name in POLICY_PLANNING_FIELDS]
    return hashlib.sha256("\n".join(values).encode()).hexdigest()[:16]


def placement_fingerprint(*, snapshot: ClusterSnapshot) -> str:
    """sha256 over every partition's replica list in `snapshot` (order-independent)."""
    rows = sorted((p.topic, p.partition, tuple(p.replicas)) for p in snapshot.partitions)
    return hashlib.sha256(repr(rows).encode()).hexdigest()[:16]


def proposal_basis(*, snapshot: ClusterSnapshot, policy: ClusterPolicy) -> dict[str, Any]:
    """The basis stored with a detected proposal (report["basis"]) and compared with
    each later round's: alive and dead brokers, the policy, the placement."""
    return {
        "alive": sorted(b.id for b in snapshot.brokers if b.alive),
        "dead": sorted(b.id for b in snapshot.brokers if not b.alive),
        "policy": policy_fingerprint(policy=policy),
        "placement": placement_fingerprint(snapshot=snapshot),
    }


def basis_changes(*, before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What changed between two bases, said for an operator ([] when it holds)."""
    changes = []
    came = sorted(set(now["alive"]) - set(before["alive"]))
    went = sorted(set(before["alive"]) - set(now["alive"]))
    if came:
        back = set(came) & set(before["dead"])
        changes.append(
            _brokers(came) + (" came back" if back else " joined (new, undrained or included)")
        )
    if went:
        gone = " died" if set(went) & set(now["dead"]) else " left (drained, excluded or removed)"
        changes.append(_brokers(went) + gone)
    if before["policy"] != now["policy"]:
        changes.append("the cluster policy changed")
    if before["placement"] != now["placement"]:
        changes.append(
            "the partitions' placement changed (a reassignment, or topics created or deleted)"
        )
    return changes


def _brokers(ids: list[int]) -> str:
    return ("broker " if len(ids) == 1 else "brokers ") + ", ".join(str(i) for i in ids)
