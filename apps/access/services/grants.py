"""Making and revoking grants by hand (the dashboard's access page)."""

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from apps.audit.services import audit_record

from ..actions import GrantAction
from ..backends import user_grants_forget
from ..errors import GrantError, GrantPermissionDenied
from ..models import Grant, GrantSource
from ..roles import Role

MANAGE = "access.add_grant"


def grant_state(grant: Grant) -> dict[str, Any]:
    return {
        "role": grant.role,
        "user": grant.user.get_username() if grant.user_id else None,
        "group": grant.group.name if grant.group_id else None,
        "cluster": grant.cluster.name if grant.cluster_id else "*",
        "source": grant.source,
    }


def _may_manage(actor: Any, cluster: Any | None) -> bool:
    # Grants on every cluster take the right on every cluster.
    return bool(actor and actor.is_authenticated and actor.has_perm(MANAGE, cluster))


def grant_create(
    *,
    actor: Any,
    role: str,
    cluster: Any | None,
    username: str = "",
    group_name: str = "",
    client_address: str | None = None,
) -> Grant:
    """Grant `role` to a user or a group on `cluster` (None: every cluster)."""
    if not _may_manage(actor, cluster):
        raise GrantPermissionDenied("you are not allowed to manage grants there")
    try:
        role = Role(role)
    except ValueError:
        raise GrantError(f"unknown role {role!r}: one of {', '.join(Role)}") from None
    if bool(username) == bool(group_name):
        raise GrantError("a grant goes to a user or to a group: name exactly one")
    holder: dict[str, Any] = {}
    if username:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise GrantError(f"no user is called {username!r}")
        holder["user"] = user
    else:
        group = Group.objects.filter(name=group_name).first()
        if group is None:
            raise GrantError(f"no group is called {group_name!r}")
        holder["group"] = group
    with transaction.atomic():
        grant, created = Grant.objects.get_or_create(
            role=role, cluster=cluster, source=GrantSource.MANUAL, **holder
        )
        if not created:
            raise GrantError(f"{grant} exists already")
        audit_record(
            actor=actor,
            action=GrantAction.CREATED,
            obj=grant,
            after=grant_state(grant),
            client_address=client_address,
        )
    user_grants_forget(actor)
    return grant


def grant_revoke(*, actor: Any, grant_id: int, client_address: str | None = None) -> None:
    with transaction.atomic():
        grant = (
            Grant.objects.select_for_update(of=("self",))
            .select_related("user", "group", "cluster")
            .filter(pk=grant_id)
            .first()
        )
        if grant is None or not _may_manage(actor, grant.cluster):
            # Not found and not allowed read the same: no trace of other clusters' grants.
            raise GrantError("no such grant")
        before = grant_state(grant)
        grant.delete()
        audit_record(
            actor=actor,
            action=GrantAction.REVOKED,
            object_type="access.grant",
            object_id=str(grant_id),
            object_repr=f"{before['role']} on {before['cluster']}",
            cluster_id=grant.cluster_id,
            before=before,
            client_address=client_address,
        )
    user_grants_forget(actor)
