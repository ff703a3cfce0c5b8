"""Reads of grants: where a user holds a permission, and the grants an admin manages."""

from typing import Any

from django.db.models import QuerySet

from .backends import ALL, user_grants_by_cluster
from .models import Grant

ALL_CLUSTERS = None


def cluster_ids_with_perm(*, user: Any, perm: str) -> set[int] | None:
    """The ids of the clusters where `user` holds `perm`; None when it is every cluster."""
    if not (user.is_authenticated and user.is_active):
        return set()
    if user.is_superuser:
        return ALL_CLUSTERS
    grants = user_grants_by_cluster(user)
    if perm in grants.get(ALL, frozenset()):
        return ALL_CLUSTERS
    return {cid for cid, perms in grants.items() if cid is not None and perm in perms}


def user_holds_anywhere(*, user: Any, perm: str) -> bool:
    ids = cluster_ids_with_perm(user=user, perm=perm)
    return ids is ALL_CLUSTERS or bool(ids)


def grants_list(*, cluster_ids: set[int] | None) -> QuerySet[Grant]:
    """Grants on these clusters (None: every grant, those on all clusters included)."""
    grants = Grant.objects.select_related("user", "group", "cluster")
    if cluster_ids is not ALL_CLUSTERS:
        grants = grants.filter(cluster_id__in=cluster_ids)
    return grants.order_by("cluster__name", "role", "user__username", "group__name")
