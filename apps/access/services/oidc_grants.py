"""Grants from single sign-on: the identity provider's group claim, mapped to roles by
OIDC_GROUP_GRANTS ("group=role@cluster" items, comma-separated; cluster `*`: all)."""

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction

from apps.audit.services import audit_record

from ..actions import GrantAction
from ..backends import user_grants_forget
from ..models import Grant, GrantSource
from ..roles import Role

ALL_CLUSTERS = "*"


@dataclass(frozen=True)
class GroupGrant:
    group: str
    role: Role
    cluster: str  # a cluster name, or ALL_CLUSTERS


def oidc_group_grants_parse(*, text: str) -> list[GroupGrant]:
    """OIDC_GROUP_GRANTS as rules; a malformed item is an ImproperlyConfigured naming it."""
    rules = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        group, eq, target = item.partition("=")
        role, at, cluster = target.partition("@")
        if not (eq and at and group.strip() and cluster.strip()) or role.strip() not in set(Role):
            raise ImproperlyConfigured(
                f"OIDC_GROUP_GRANTS: {item!r} is not group=role@cluster "
                f"(role one of {', '.join(Role)}; cluster a name or *)"
            )
        rules.append(GroupGrant(group.strip(), Role(role.strip()), cluster.strip()))
    return rules


def _claimed_groups(claims: dict) -> set[str]:
    groups = claims.get(settings.OIDC_GROUPS_CLAIM)
    if isinstance(groups, str):
        return {groups}
    if isinstance(groups, list):
        return {g for g in groups if isinstance(g, str)}
    return set()


def _state(pairs: set[tuple[str, int | None]], names: dict[int, str]) -> list[str]:
    return sorted(f"{role}@{names.get(c, '?') if c else ALL_CLUSTERS}" for role, c in pairs)


def oidc_grants_apply(*, user: Any, claims: dict) -> None:
    """Replace the user's source="oidc" grants with those the claims map to; a change is
    audited (before / after). Rules naming a cluster that does not exist grant nothing."""
    rules = oidc_group_grants_parse(text=settings.OIDC_GROUP_GRANTS)
    groups = _claimed_groups(claims)
    clusters = Grant._meta.get_field("cluster").related_model.objects
    names_wanted = {r.cluster for r in rules if r.group in groups and r.cluster != ALL_CLUSTERS}
    ids = dict(clusters.filter(name__in=names_wanted).values_list("name", "pk"))
    wanted: set[tuple[str, int | None]] = set()
    for rule in rules:
        if rule.group not in groups:
            continue
        if rule.cluster == ALL_CLUSTERS:
            wanted.add((rule.role.value, None))
        elif rule.cluster in ids:
            wanted.add((rule.role.value, ids[rule.cluster]))
    with transaction.atomic():
        held = Grant.objects.select_for_update(of=("self",)).filter(
            user=user, source=GrantSource.OIDC
        )
        have = {(g.role, g.cluster_id): g for g in held}
        gone = set(have) - wanted
        new = wanted - set(have)
        if not gone and not new:
            return
        for key in gone:
            have[key].delete()
        Grant.objects.bulk_create(
            Grant(user=user, role=role, cluster_id=cluster_id, source=GrantSource.OIDC)
            for role, cluster_id in new
        )
        all_ids = {c for _, c in set(have) | wanted if c}
        names = dict(clusters.filter(pk__in=all_ids).values_list("pk", "name"))
        audit_record(
            actor=user,
            action=GrantAction.OIDC_APPLIED,
            obj=user,
            before=_state(set(have), names),
            after=_state(wanted, names),
            reason=f"single sign-on: groups {', '.join(sorted(groups)) or '(none)'}",
        )
    user_grants_forget(user)
