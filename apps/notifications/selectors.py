"""Reads of notification channels and their delivery log. URLs leave only as hosts."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Prefetch

from apps.clusters.models import Cluster

from .models import Delivery, DeliveryAttempt, EventKind, NotificationChannel


def channels_for_event(*, cluster_id: int, event: str) -> list[NotificationChannel]:
    channels = NotificationChannel.objects.filter(cluster_id=cluster_id, enabled=True)
    return [c for c in channels if c.wants(event)]


@dataclass(frozen=True)
class ChannelRow:
    id: int
    cluster: str
    name: str
    kind: str
    host: str
    events: str
    enabled: bool
    last_state: str
    last_at: datetime | None


def _events_text(channel: NotificationChannel) -> str:
    if channel.all_events:
        return "all events"
    labels = dict(EventKind.choices)
    return ", ".join(labels.get(e, e) for e in channel.events) or "none"


def channel_rows_list(
    *, cluster: Cluster | None = None, cluster_ids: set[int] | None = None
) -> list[ChannelRow]:
    """The channels of `cluster`, or of these clusters (None: all)."""
    channels = NotificationChannel.objects.select_related("cluster")
    if cluster is not None:
        channels = channels.filter(cluster=cluster)
    if cluster_ids is not None:
        channels = channels.filter(cluster_id__in=cluster_ids)
    rows = []
    for c in channels:
        last = c.deliveries.order_by("-created_at", "-id").first()
        rows.append(
            ChannelRow(
                id=c.pk,
                cluster=c.cluster.name,
                name=c.name,
                kind=c.get_kind_display(),
                host=c.url_host,
                events=_events_text(c),
                enabled=c.enabled,
                last_state=last.state if last else "",
                last_at=last.created_at if last else None,
            )
        )
    return rows


def deliveries_recent(
    *,
    cluster: Cluster | None = None,
    cluster_ids: set[int] | None = None,
    channel_id: int | None = None,
    limit: int = 50,
) -> list[Delivery]:
    """Newest first, each with its attempts (`delivery.log.all()`) and channel; of
    these clusters only when `cluster_ids` is given."""
    deliveries = Delivery.objects.select_related("channel__cluster").prefetch_related(
        Prefetch("log", queryset=DeliveryAttempt.objects.order_by("number"))
    )
    if cluster is not None:
        deliveries = deliveries.filter(channel__cluster=cluster)
    if cluster_ids is not None:
        deliveries = deliveries.filter(channel__cluster_id__in=cluster_ids)
    if channel_id is not None:
        deliveries = deliveries.filter(channel_id=channel_id)
    return list(deliveries[:limit])


def channel_get(*, channel_id: int) -> NotificationChannel | None:
    return NotificationChannel.objects.select_related("cluster").filter(pk=channel_id).first()


def deliveries_count_by_state() -> dict[str, int]:
    """{delivery state: deliveries} in the delivery log."""
    rows = Delivery.objects.values_list("state").annotate(n=Count("pk")).order_by()
    return dict(rows)
