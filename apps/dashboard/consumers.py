"""Websocket consumers, one per concern, each joined to per-cluster groups.

They only forward the small notices `events.py` sends (noting a pushed stamp, so the
answers built for it are shared without reading it again: metrics.selectors.shared);
pages then fetch what they show over HTTP with the same permission checks as any
page. A socket needs a signed-in user allowed to see the cluster: otherwise it is
accepted and closed at once with a 44xx code, so the browser knows not to reconnect
(a refused handshake looks like a network error and would be retried forever).
"""

import logging

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from apps.clusters.models import Cluster
from apps.clusters.selectors import (
    cluster_visible_get,
    clusters_visible_list,
    user_may_see_clusters,
)
from apps.core.bounds import JSONBoundsError, json_bounded_loads
from apps.metrics.selectors import stamp_pushed_note

from .events import cluster_group_name, plans_group_name

logger = logging.getLogger(__name__)

CLOSE_BAD_FRAME = 4400
CLOSE_NOT_SIGNED_IN = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_NOT_FOUND = 4404
# Clients only listen; a frame is at most a small JSON object, and is ignored.
FRAME_MAX_BYTES = 4096


def frame_problem(*, text_data: str | None, bytes_data: bytes | None) -> str | None:
    """Why a client's frame is refused (not text, too large, not a JSON object), or None."""
    if text_data is None:
        return "a binary frame"
    if len(text_data.encode()) > FRAME_MAX_BYTES:
        return f"a frame larger than {FRAME_MAX_BYTES} bytes"
    try:
        content = json_bounded_loads(text=text_data)
    except JSONBoundsError as exc:
        return f"a frame {exc}"
    if not isinstance(content, dict):
        return "a frame that is not a JSON object"
    return None


@database_sync_to_async
def _visible_cluster_ids(user) -> list[int]:
    return list(clusters_visible_list(user=user).values_list("pk", flat=True))


@database_sync_to_async
def _visible_cluster(user, name: str) -> tuple[bool, Cluster | None]:
    return user_may_see_clusters(user=user), cluster_visible_get(user=user, name=name)


class _GroupsConsumer(AsyncJsonWebsocketConsumer):
    """Accepts, checks the user, joins `groups_for(...)`, forwards events as JSON."""

    async def connect(self) -> None:
        self.joined: list[str] = []
        await self.accept()
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_NOT_SIGNED_IN)
            return
        groups, refusal = await self.groups_for(user)
        if refusal:
            await self.close(code=refusal)
            return
        for group in groups:
            await self.channel_layer.group_add(group, self.channel_name)
            self.joined.append(group)
        await self.send_json({"type": "hello", "groups": len(self.joined)})

    async def groups_for(self, user) -> tuple[list[str], int | None]:
        raise NotImplementedError

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive(self, text_data=None, bytes_data=None, **kwargs) -> None:
        # Read-only channel: clients only listen. A bad frame closes the socket with one
        # log line (never the frame itself, nor a traceback).
        problem = frame_problem(text_data=text_data, bytes_data=bytes_data)
        if problem is not None:
            logger.warning(
                "websocket %s closed (%s): %s", self.scope["path"], CLOSE_BAD_FRAME, problem
            )
            await self.close(code=CLOSE_BAD_FRAME)

    async def forward(self, event: dict) -> None:
        await self.send_json(event)

    async def forward_stamped(self, event: dict) -> None:
        # The pages will ask for answers of this stamp: this process may trust it.
        if event.get("stamp"):
            await stamp_pushed_note(cluster_id=event["cluster_id"], stamp=event["stamp"])
        await self.send_json(event)

    # Channels calls the handler named after the event type ("." becomes "_").
    cluster_changed = forward_stamped
    loads_changed = forward_stamped
    plan_changed = forward
    execution_progress = forward


class ClustersConsumer(_GroupsConsumer):
    """The clusters overview: every cluster the user may see."""

    async def groups_for(self, user) -> tuple[list[str], int | None]:
        if not await database_sync_to_async(user_may_see_clusters)(user=user):
            return [], CLOSE_FORBIDDEN
        ids = await _visible_cluster_ids(user)
        return [cluster_group_name(cluster_id=i) for i in ids], None


class _OneClusterConsumer(_GroupsConsumer):
    async def groups_for(self, user) -> tuple[list[str], int | None]:
        allowed, cluster = await _visible_cluster(user, self.scope["url_route"]["kwargs"]["name"])
        if not allowed:
            return [], CLOSE_FORBIDDEN
        if cluster is None:
            return [], CLOSE_NOT_FOUND
        return [self.group_name(cluster_id=cluster.pk)], None

    def group_name(self, *, cluster_id: int) -> str:
        raise NotImplementedError


class ClusterConsumer(_OneClusterConsumer):
    """One cluster's state and traffic (heatmap, brokers, charts)."""

    def group_name(self, *, cluster_id: int) -> str:
        return cluster_group_name(cluster_id=cluster_id)


class PlansConsumer(_OneClusterConsumer):
    """One cluster's plans: state changes and execution progress."""

    def group_name(self, *, cluster_id: int) -> str:
        return plans_group_name(cluster_id=cluster_id)
