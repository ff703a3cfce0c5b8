"""Permissions from grants: `user.has_perm(perm, cluster_or_its_object)` holds when a
grant of the user or of one of their groups, on that cluster or on all, carries `perm`.

Without an object, `has_perm` asks about every cluster: only grants on all clusters
count. A check that forgets its cluster fails closed for a user granted on some.
"""

from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend

from .roles import ROLE_PERMISSIONS, Role

ALL = None  # the key of grants on every cluster
_CACHE = "_access_grants"


def object_cluster_id(obj: Any) -> int | None:
    """The cluster an object belongs to: a cluster itself, or anything with `cluster_id`;
    None for an object of no cluster (only grants on every cluster cover it)."""
    meta = getattr(obj, "_meta", None)
    if meta is not None and meta.label_lower == "clusters.cluster":
        return obj.pk
    return getattr(obj, "cluster_id", None)


def user_grants_by_cluster(user: Any) -> dict[int | None, frozenset[str]]:
    """cluster id (None: every cluster) -> the permissions granted there, read once per
    user object (a request's user, a websocket's scope user)."""
    cached = getattr(user, _CACHE, None)
    if cached is not None:
        return cached
    from .models import Grant  # apps load before models

    grants: dict[int | None, set[str]] = {}
    if user.is_active and user.is_authenticated:
        rows = Grant.objects.filter(user=user) | Grant.objects.filter(group__user=user)
        for role, cluster_id in rows.values_list("role", "cluster_id").distinct():
            grants.setdefault(cluster_id, set()).update(ROLE_PERMISSIONS[Role(role)])
    frozen = {key: frozenset(perms) for key, perms in grants.items()}
    setattr(user, _CACHE, frozen)
    return frozen


def user_grants_forget(user: Any) -> None:
    """Drop the cached grants (after they changed within one request)."""
    if hasattr(user, _CACHE):
        delattr(user, _CACHE)


class GrantBackend:
    """Authorizes only; authenticates nobody."""

    def authenticate(self, request, **credentials) -> None:
        return None

    def get_user(self, user_id):
        return None

    def has_perm(self, user_obj: Any, perm: str, obj: Any = None) -> bool:
        grants = user_grants_by_cluster(user_obj)
        if perm in grants.get(ALL, frozenset()):
            return True
        cluster_id = None if obj is None else object_cluster_id(obj)
        if cluster_id is None:
            return False
        return perm in grants.get(cluster_id, frozenset())

    def has_module_perms(self, user_obj: Any, app_label: str) -> bool:
        return any(
            perm.startswith(f"{app_label}.")
            for perm in user_grants_by_cluster(user_obj).get(ALL, frozenset())
        )


class PasswordBackend(ModelBackend):
    """Django's password sign-in, with no permissions of its own: every permission is a
    grant, so a permission ticked on a group or user in the admin confers nothing.
    With LOCAL_SIGN_IN off it signs nobody in (page, admin and API token alike)."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if not settings.LOCAL_SIGN_IN:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)

    def _get_permissions(self, user_obj, obj, from_name):
        return set()
