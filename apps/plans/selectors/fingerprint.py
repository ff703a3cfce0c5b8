"""Fingerprints of replica assignments: a plan's, and what it would be from the synced model."""

import hashlib
import json
from collections.abc import Iterable

from apps.clusters.models import Cluster, Partition

from ..models import Plan

PartitionKey = tuple[str, int]


def assignment_fingerprint(*, assignment: dict[PartitionKey, list[int]]) -> str:
    """sha256 over the ordered replica lists, independent of dict order."""
    canonical = [[t, p, list(r)] for (t, p), r in sorted(assignment.items())]
    return hashlib.sha256(json.dumps(canonical, separators=(",", ":")).encode()).hexdigest()


def assignment_current(
    *, cluster: Cluster, keys: Iterable[PartitionKey]
) -> dict[PartitionKey, list[int]]:
    """Replica lists in the synced model; a partition that disappeared maps to []."""
    keys = list(keys)
    topics = {t for t, _ in keys}
    found = {
        (name, index): list(replicas)
        for name, index, replicas in Partition.objects.filter(
            topic__cluster=cluster, topic__name__in=topics
        ).values_list("topic__name", "index", "replicas")
    }
    return {key: found.get(key, []) for key in keys}


def plan_keys(*, plan: Plan) -> list[PartitionKey]:
    return [(e["topic"], e["partition"]) for e in plan.reassignment.get("partitions", [])]


def plan_fingerprint_current(*, plan: Plan) -> str:
    """The fingerprint the plan would have if proposed now, from the synced model."""
    return assignment_fingerprint(
        assignment=assignment_current(cluster=plan.cluster, keys=plan_keys(plan=plan))
    )
