"""The permission check every operator-facing plan service makes before it changes
anything."""

from django.contrib.auth.base_user import AbstractBaseUser

from ..errors import PlanPermissionDenied


def permission_require(*, user: AbstractBaseUser | None, perm: str, what: str) -> None:
    """Raise PlanPermissionDenied ("you are not allowed to <what>") unless `user` is
    signed in and has `perm`."""
    if user is None or not user.is_authenticated or not user.has_perm(perm):
        raise PlanPermissionDenied(f"you are not allowed to {what}")
