"""Push live events to the dashboard's websocket groups (one group per cluster).

Every sender is called by a receiver in `signals.py`, when a domain app signals or
writes something; the send runs after the current transaction commits (we register it
with `transaction.on_commit`, which runs at once outside a transaction), and none of
them ever raises: a Redis outage must not break a sync, an aggregation or an
execution. Events are small notices; pages fetch what they show over HTTP, so a
missed event only delays an update until the next one or the next reconnect.
"""

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)


def cluster_group_name(*, cluster_id: int) -> str:
    """Cluster state and traffic: sync results, new load windows."""
    return f"cluster.{cluster_id}"


def plans_group_name(*, cluster_id: int) -> str:
    """Plan state changes and execution progress of one cluster."""
    return f"cluster.{cluster_id}.plans"


def _send_now(*, group: str, message: dict[str, Any]) -> None:
    try:
        layer = get_channel_layer()
        if layer is None:
            return
        async_to_sync(layer.group_send)(group, message)
    except Exception:  # noqa: BLE001 - never let live updates break the caller
        logger.warning("live event %s to %s not sent", message.get("type"), group, exc_info=True)


def event_send(*, group: str, message: dict[str, Any]) -> None:
    """Send after the current transaction commits (now, if there is none)."""
    transaction.on_commit(lambda: _send_now(group=group, message=message), robust=True)


def cluster_changed_send(
    *, cluster_id: int, stamp: dict[str, str] | None = None, synced_at: str = ""
) -> None:
    """The cluster sync changed (or re-confirmed) the model of this cluster. `stamp`
    (metrics.selectors.cluster_state_stamp), computed once per sync and fanned out to
    every open page, lets a page whose stamp matches skip refetching anything."""
    message: dict[str, Any] = {"type": "cluster.changed", "cluster_id": cluster_id}
    if stamp is not None:
        message |= {"stamp": stamp, "synced_at": synced_at}
    event_send(group=cluster_group_name(cluster_id=cluster_id), message=message)


def loads_changed_send(
    *, cluster_id: int, window_end: str = "", stamp: dict[str, str] | None = None
) -> None:
    """New per-partition / per-broker load windows were written for this cluster.
    `stamp`, as for `cluster_changed_send`, lets every page fetch answers shared by all."""
    message: dict[str, Any] = {
        "type": "loads.changed",
        "cluster_id": cluster_id,
        "window_end": window_end,
    }
    if stamp is not None:
        message["stamp"] = stamp
    event_send(group=cluster_group_name(cluster_id=cluster_id), message=message)


def plan_changed_send(*, cluster_id: int, plan_id: int, state: str) -> None:
    """A plan was proposed or changed state (approved, rejected, executing, ...)."""
    message = {"type": "plan.changed", "cluster_id": cluster_id, "plan_id": plan_id, "state": state}
    event_send(group=plans_group_name(cluster_id=cluster_id), message=message)
    # The cluster pages show the open proposal and running execution too.
    event_send(group=cluster_group_name(cluster_id=cluster_id), message=message)


def execution_progress_send(
    *, cluster_id: int, plan_id: int, done: int, total: int, bytes_done: int = 0
) -> None:
    """An executing plan finished some of its moves."""
    event_send(
        group=plans_group_name(cluster_id=cluster_id),
        message={
            "type": "execution.progress",
            "cluster_id": cluster_id,
            "plan_id": plan_id,
            "done": done,
            "total": total,
            "bytes_done": bytes_done,
        },
    )
