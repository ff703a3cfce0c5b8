"""Replication health around a plan: what its copying may do to the rest of the cluster."""

from apps.clusters.models import Partition

from ..models import Plan


def under_replicated_outside_moves(*, plan: Plan) -> int:
    """Partitions of the plan's cluster under-replicated (as the last sync saw them)
    that the plan does not move: an in-sync replica lost to the copy's load."""
    moving = set(plan.moves.values_list("topic", "partition"))
    found = Partition.objects.filter(
        topic__cluster_id=plan.cluster_id, under_replicated=True
    ).values_list("topic__name", "index")
    return sum(1 for key in found if key not in moving)
