"""The permission check every operator-facing plan service makes before it changes
anything."""

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser

from ..errors import PlanPermissionDenied


def permission_require(
    *, user: AbstractBaseUser | None, perm: str, what: str, cluster: Any
) -> None:
    """Raise PlanPermissionDenied ("you are not allowed to <what>") unless `user` is
    signed in and holds `perm` on `cluster` (or on every cluster)."""
    if user is None or not user.is_authenticated or not user.has_perm(perm, cluster):
        raise PlanPermissionDenied(f"you are not allowed to {what}")
