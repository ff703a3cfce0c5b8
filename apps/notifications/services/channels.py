"""Channels: create, change and delete them (each audited, without URL or secret), and
send one a test event synchronously.
"""

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction

from apps.audit.services import Actor, audit_record
from apps.clusters.models import Cluster

from ..actions import ChannelAction
from ..errors import NotificationChannelInvalid
from ..events import event_payload, event_test
from ..models import SUBSCRIBABLE_EVENTS, ChannelKind, NotificationChannel
from ..outbound import OutboundRefused, url_check
from ..sending import event_send

# Shorter keys are guessable; 32 random bytes (e.g. `openssl rand -hex 32`) are ideal.
SECRET_MIN_LENGTH = 16
CHANGEABLE = ("name", "url", "secret", "all_events", "events", "enabled")


def notification_channel_validate(*, values: dict[str, Any]) -> None:
    """Raise NotificationChannelInvalid unless `values` (every field, kind too) make a channel."""
    if not values["name"].strip():
        raise NotificationChannelInvalid("a channel needs a name")
    if values["kind"] not in ChannelKind.values:
        raise NotificationChannelInvalid(f"unknown channel kind {values['kind']!r}")
    parts = urlsplit(values["url"])
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise NotificationChannelInvalid("the URL must be an http:// or https:// address")
    try:
        url_check(url=values["url"])
    except OutboundRefused as exc:
        raise NotificationChannelInvalid(f"the URL's host is refused: {exc}") from exc
    if values["kind"] == ChannelKind.WEBHOOK and len(values["secret"]) < SECRET_MIN_LENGTH:
        raise NotificationChannelInvalid(
            f"a JSON webhook needs a signing secret of at least {SECRET_MIN_LENGTH} characters"
        )
    unknown = sorted(set(values["events"]) - set(SUBSCRIBABLE_EVENTS))
    if unknown:
        raise NotificationChannelInvalid(f"unknown event {unknown[0]!r}")
    if not values["all_events"] and not values["events"]:
        raise NotificationChannelInvalid("choose at least one event, or all events")


def _shown(channel: NotificationChannel) -> dict[str, Any]:
    """What the audit trail records of a channel: never its URL beyond the host, nor secret."""
    return {
        "name": channel.name,
        "kind": channel.kind,
        "host": channel.url_host,
        "all_events": channel.all_events,
        "events": list(channel.events),
        "enabled": channel.enabled,
    }


def notification_channel_create(
    *,
    cluster: Cluster,
    name: str,
    kind: str,
    url: str,
    actor: Actor,
    secret: str = "",
    events: list[str] | None = None,
    enabled: bool = True,
    client_address: str | None = None,
) -> NotificationChannel:
    values = {
        "name": name,
        "kind": kind,
        "url": url.strip(),
        "secret": secret,
        "all_events": events is None,
        "events": sorted(set(events or [])),
        "enabled": enabled,
    }
    notification_channel_validate(values=values)
    if NotificationChannel.objects.filter(cluster=cluster, name=name).exists():
        raise NotificationChannelInvalid(f"{cluster.name} already has a channel named {name!r}")
    with transaction.atomic():
        channel = NotificationChannel.objects.create(cluster=cluster, **values)
        audit_record(
            actor=actor,
            action=ChannelAction.CREATED,
            obj=channel,
            after=_shown(channel),
            client_address=client_address,
        )
    return channel


def notification_channel_update(
    *,
    channel: NotificationChannel,
    actor: Actor,
    changes: dict[str, Any],
    client_address: str | None = None,
) -> NotificationChannel:
    """Change some of CHANGEABLE. An empty `url` or `secret` keeps the stored one."""
    unknown = sorted(set(changes) - set(CHANGEABLE))
    if unknown:
        raise NotificationChannelInvalid(f"unknown channel field {unknown[0]!r}")
    changes = {k: v for k, v in changes.items() if not (k in ("url", "secret") and not v)}
    if "events" in changes:
        changes["events"] = sorted(set(changes["events"]))
    current = {f: getattr(channel, f) for f in CHANGEABLE} | {"kind": channel.kind}
    notification_channel_validate(values=current | changes)
    changed = {f: v for f, v in changes.items() if current[f] != v}
    if not changed:
        return channel
    if "name" in changed and (
        NotificationChannel.objects.filter(cluster=channel.cluster_id, name=changed["name"])
        .exclude(pk=channel.pk)
        .exists()
    ):
        raise NotificationChannelInvalid(f"another channel is named {changed['name']!r}")
    before = _shown(channel)
    with transaction.atomic():
        for field, value in changed.items():
            setattr(channel, field, value)
        channel.save()
        after = _shown(channel)
        # Say that a credential changed without saying what it is.
        after |= {f"{f}_changed": True for f in ("url", "secret") if f in changed}
        audit_record(
            actor=actor,
            action=ChannelAction.CHANGED,
            obj=channel,
            before=before,
            after=after,
            client_address=client_address,
        )
    return channel


def notification_channel_delete(
    *, channel: NotificationChannel, actor: Actor, client_address: str | None = None
) -> None:
    """Delete a channel and its delivery log."""
    with transaction.atomic():
        audit_record(
            actor=actor,
            action=ChannelAction.DELETED,
            obj=channel,
            before=_shown(channel),
            client_address=client_address,
        )
        channel.delete()


@dataclass(frozen=True)
class ChannelTestResult:
    ok: bool
    status_code: int | None
    error: str


def notification_channel_test(
    *, channel: NotificationChannel, actor: Actor, client_address: str | None = None
) -> ChannelTestResult:
    """Send a `test` event now, with NOTIFICATIONS_TEST_TIMEOUT; audited, not retried.
    A disabled channel is sent nothing (event_send refuses it)."""
    name = getattr(actor, "name", None) or getattr(actor, "get_username", lambda: "system")()
    event = event_test(cluster=channel.cluster, channel_name=channel.name, actor=name)
    result = event_send(
        channel=channel,
        payload=event_payload(event=event),
        timeout=settings.NOTIFICATIONS_TEST_TIMEOUT,
    )
    audit_record(
        actor=actor,
        action=ChannelAction.TESTED,
        obj=channel,
        after={"ok": result.ok, "status_code": result.status_code, "error": result.error},
        client_address=client_address,
    )
    return ChannelTestResult(ok=result.ok, status_code=result.status_code, error=result.error)
