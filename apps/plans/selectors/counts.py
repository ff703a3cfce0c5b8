"""How many plans each cluster has, by state and by origin (monitoring's gauges)."""

from django.db.models import Count

from ..models import Plan


def plans_count_by_state() -> dict[tuple[int, str], int]:
    """{(cluster id, state): plans}."""
    rows = Plan.objects.values_list("cluster_id", "state").annotate(n=Count("pk")).order_by()
    return {(cluster_id, state): n for cluster_id, state, n in rows}


def plans_count_by_origin() -> dict[tuple[int, str], int]:
    """{(cluster id, origin): plans ever made} (plans are kept with their cluster)."""
    rows = Plan.objects.values_list("cluster_id", "origin").annotate(n=Count("pk")).order_by()
    return {(cluster_id, origin): n for cluster_id, origin, n in rows}
