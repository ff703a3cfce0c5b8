"""Permissions for templates, like Django's `perms` but judged by grants: `granted`
(held on some cluster: the menu) and `cluster_perms` (held on the page's cluster:
its buttons). Written `{% if granted.audit.view_auditevent %}`."""

from collections.abc import Callable
from typing import Any

from apps.access.selectors import user_holds_anywhere


class _AppPerms:
    def __init__(self, check: Callable[[str], bool], app: str) -> None:
        self._check, self._app = check, app

    def __getitem__(self, codename: str) -> bool:
        return self._check(f"{self._app}.{codename}")


class PermsOn:
    """`perms_on[app][codename]`: whether the user holds it where this one looks."""

    def __init__(self, check: Callable[[str], bool]) -> None:
        self._check = check

    def __getitem__(self, app: str) -> _AppPerms:
        return _AppPerms(self._check, app)


def perms_on_cluster(*, user: Any, cluster: Any) -> PermsOn:
    return PermsOn(lambda perm: user.has_perm(perm, cluster))


def perms_anywhere(*, user: Any) -> PermsOn:
    return PermsOn(lambda perm: user_holds_anywhere(user=user, perm=perm))


def granted(request) -> dict[str, PermsOn]:
    """Context processor: `granted`, the permissions the user holds on some cluster."""
    return {"granted": perms_anywhere(user=request.user)}
