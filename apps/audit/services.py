"""Write audit events. The only way in; there is no way to change one."""

import json
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.http import HttpRequest

from apps.core.client_address import client_address_get as core_client_address_get

from .models import ActorKind, AuditEvent


@dataclass(frozen=True)
class SystemActor:
    """A non-human actor: the per-cluster policy or a subsystem (executor, detector)."""

    kind: str
    name: str


def actor_policy(*, cluster_name: str) -> SystemActor:
    return SystemActor(kind=ActorKind.POLICY, name=f"policy:{cluster_name}")


def actor_system(*, name: str) -> SystemActor:
    return SystemActor(kind=ActorKind.SYSTEM, name=name)


Actor = AbstractBaseUser | AnonymousUser | SystemActor | None


def client_address_get(*, request: HttpRequest | None) -> str | None:
    """The client's address: the peer's, or behind TRUSTED_PROXIES the one they forwarded."""
    return core_client_address_get(request=request)


def _json_safe(value: Any) -> Any:
    # Dates, decimals, UUIDs ... become strings, so the event stores what was shown.
    if value is None:
        return None
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder))


def _actor_fields(actor: Actor) -> dict[str, Any]:
    if isinstance(actor, SystemActor):
        return {"actor_kind": actor.kind, "actor": actor.name, "actor_user_id": None}
    if actor is None or not getattr(actor, "is_authenticated", False):
        return {"actor_kind": ActorKind.ANONYMOUS, "actor": "anonymous", "actor_user_id": None}
    return {
        "actor_kind": ActorKind.USER,
        "actor": actor.get_username(),
        "actor_user_id": actor.pk,
    }


def object_cluster_id(obj: models.Model) -> int | None:
    """The cluster an object belongs to: the cluster itself, its `cluster_id`, or its
    plan's (executions, moves); None for objects of no cluster."""
    if obj._meta.label_lower == "clusters.cluster":
        return obj.pk
    if getattr(obj, "cluster_id", None) is not None:
        return obj.cluster_id
    plan = getattr(obj, "plan", None) if hasattr(obj, "plan_id") else None
    return getattr(plan, "cluster_id", None)


def audit_record(
    *,
    actor: Actor,
    action: str,
    obj: models.Model | None = None,
    before: Any = None,
    after: Any = None,
    reason: str = "",
    client_address: str | None = None,
    object_type: str = "",
    object_id: str = "",
    object_repr: str = "",
    cluster_id: int | None = None,
) -> AuditEvent:
    """Append one event. `obj` fills the object columns and the cluster; the explicit
    ones win when given."""
    if not action:
        raise ValueError("an audit event needs an action")
    if obj is not None:
        object_type = object_type or obj._meta.label_lower
        object_id = object_id or str(obj.pk)
        object_repr = object_repr or str(obj)
        cluster_id = cluster_id if cluster_id is not None else object_cluster_id(obj)
    return AuditEvent.objects.create(
        **_actor_fields(actor),
        action=action,
        object_type=object_type,
        object_id=object_id,
        object_repr=object_repr[:255],
        before=_json_safe(before),
        after=_json_safe(after),
        reason=reason or "",
        client_address=client_address or None,
        cluster_id=cluster_id,
    )
