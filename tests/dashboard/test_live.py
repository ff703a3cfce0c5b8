"""Websockets: who may connect, what reaches whom, and that a Redis outage never
breaks the services that push."""

import logging

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.utils import timezone

from apps.clusters import services as cluster_services
from apps.clusters.models import Cluster
from apps.clusters.sync_outcome import SyncOutcome
from apps.dashboard.events import cluster_changed_send, loads_changed_send
from apps.metrics.models import AggregationRun
from apps.metrics.selectors import cluster_state_stamp
from apps.metrics.signals import loads_stored
from balancer_site.asgi import application
from tests.support.factories import SKEWED, cluster_make, cluster_state, plan_make

IN_MEMORY = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


@pytest.fixture
def memory_layer(settings):
    settings.CHANNEL_LAYERS = IN_MEMORY


def socket_for(client, user, path: str) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://127.0.0.1")]
    if user is not None:
        client.force_login(user)
        headers.append((b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()))
    return WebsocketCommunicator(application, path, headers=headers)


async def close_code(socket: WebsocketCommunicator) -> int:
    connected, _ = await socket.connect()
    assert connected  # accepted, so the browser can read the code below
    message = await socket.receive_output(timeout=5)
    assert message["type"] == "websocket.close"
    return message["code"]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize(
    "path", ["/ws/clusters/", "/ws/clusters/prod/", "/ws/clusters/prod/plans/"]
)
def test_it_closes_sockets_of_anonymous_and_roleless_users(client, memory_layer, nobody, path):
    cluster_make()

    assert async_to_sync(close_code)(socket_for(client, None, path)) == 4401
    assert async_to_sync(close_code)(socket_for(client, nobody, path)) == 4403


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_closes_a_socket_for_an_unknown_cluster(client, memory_layer, viewer):
    assert async_to_sync(close_code)(socket_for(client, viewer, "/ws/clusters/nope/")) == 4404


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_pushes_cluster_events_to_that_cluster_only(client, memory_layer, viewer):
    prod, other = cluster_make("prod"), cluster_make("other")
    socket = socket_for(client, viewer, "/ws/clusters/prod/")

    async def scenario():
        connected, _ = await socket.connect()
        assert connected
        assert (await socket.receive_json_from(timeout=5))["type"] == "hello"
        await sync_to_async(cluster_changed_send)(cluster_id=other.pk)
        await sync_to_async(loads_changed_send)(cluster_id=prod.pk, window_end="t1")
        # The first event we get is ours: the other cluster's never arrives.
        event = await socket.receive_json_from(timeout=5)
        assert event == {"type": "loads.changed", "cluster_id": prod.pk, "window_end": "t1"}
        assert await socket.receive_nothing(timeout=0.3)
        await socket.disconnect()

    async_to_sync(scenario)()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_pushes_plan_changes_to_plan_and_overview_sockets(client, memory_layer, viewer):
    cluster = cluster_make()
    plans = socket_for(client, viewer, "/ws/clusters/prod/plans/")
    overview = socket_for(client, viewer, "/ws/clusters/")

    async def scenario():
        for socket in (plans, overview):
            assert (await socket.connect())[0]
            assert (await socket.receive_json_from(timeout=5))["type"] == "hello"
        # The lifecycle service knows nothing of websockets: its audit event is our cue.
        plan = await sync_to_async(plan_make)(cluster)
        expected = {
            "type": "plan.changed",
            "cluster_id": cluster.pk,
            "plan_id": plan.pk,
            "state": "proposed",
        }
        assert await plans.receive_json_from(timeout=5) == expected
        assert await overview.receive_json_from(timeout=5) == expected
        for socket in (plans, overview):
            await socket.disconnect()

    async_to_sync(scenario)()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_never_fails_a_sync_when_redis_is_down(settings, monkeypatch, caplog):
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]},  # nothing listens there
        }
    }
    cluster = cluster_make()
    monkeypatch.setattr(
        cluster_services, "cluster_state_read", lambda admin: cluster_state(SKEWED, alive=(1, 3))
    )
    with caplog.at_level(logging.WARNING, logger="apps.dashboard.events"):
        assert cluster_services.cluster_sync(cluster=cluster, admin=object()) is SyncOutcome.SYNCED
    assert not cluster.brokers.get(node_id=2).alive  # the sync itself went through
    assert "live event cluster.changed" in caplog.text  # and the push was tried, and failed


@pytest.mark.integration
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_delivers_through_the_real_redis_layer(client, redis_server, viewer, settings):
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # Our own prefix: other sessions share this Redis.
            "CONFIG": {"hosts": [redis_server], "prefix": f"it-dash-{timezone.now():%H%M%S%f}"},
        }
    }
    cluster = cluster_make()
    socket = socket_for(client, viewer, "/ws/clusters/prod/")

    async def scenario():
        assert (await socket.connect())[0]
        assert (await socket.receive_json_from(timeout=5))["type"] == "hello"
        await sync_to_async(cluster_changed_send)(cluster_id=cluster.pk)
        assert await socket.receive_json_from(timeout=5) == {
            "type": "cluster.changed",
            "cluster_id": cluster.pk,
        }
        await socket.disconnect()

    async_to_sync(scenario)()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_announces_new_load_windows_when_an_aggregation_stores_them(
    client, memory_layer, viewer
):
    cluster = cluster_make()
    socket = socket_for(client, viewer, "/ws/clusters/prod/")

    def aggregation_finishes(rows: int) -> None:
        AggregationRun.objects.create(
            cluster=cluster,
            status=AggregationRun.Status.SUCCEEDED,
            started_at=timezone.now(),
            finished_at=timezone.now(),
            output_rows=rows,
        )
        if rows:  # as metrics.services.storage does when it stored windows
            loads_stored.send_robust(sender=Cluster, cluster=cluster, window_start=timezone.now())

    async def scenario():
        assert (await socket.connect())[0]
        assert (await socket.receive_json_from(timeout=5))["type"] == "hello"
        await sync_to_async(aggregation_finishes)(0)  # nothing new: no event
        assert await socket.receive_nothing(timeout=0.3)
        await sync_to_async(aggregation_finishes)(48)
        event = await socket.receive_json_from(timeout=5)
        # Stamped like a sync, so every page fetches the new window's answers once.
        stamp = await sync_to_async(cluster_state_stamp)(cluster_id=cluster.pk)
        assert event == {
            "type": "loads.changed",
            "cluster_id": cluster.pk,
            "window_end": "",
            "stamp": stamp,
        }
        await socket.disconnect()

    async_to_sync(scenario)()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_stamps_each_sync_so_pages_refetch_only_when_the_model_changed(
    client, memory_layer, viewer
):
    from apps.clusters.models import Cluster
    from apps.clusters.signals import cluster_synced

    cluster = cluster_make()
    client.force_login(viewer)
    body = client.get("/clusters/prod/").content.decode()
    page_stamp = body.split('data-stamp-model="', 1)[1].split('"', 1)[0]
    socket = socket_for(client, viewer, "/ws/clusters/prod/")

    def synced(assignment) -> None:
        cluster_services.cluster_state_apply(
            cluster=cluster, state=cluster_state(assignment), now=timezone.now()
        )
        cluster_synced.send_robust(sender=Cluster, cluster=Cluster.objects.get(pk=cluster.pk))

    async def scenario():
        assert (await socket.connect())[0]
        assert (await socket.receive_json_from(timeout=5))["type"] == "hello"
        await sync_to_async(synced)(SKEWED)  # nothing changed
        same = await socket.receive_json_from(timeout=5)
        assert same["type"] == "cluster.changed" and same["stamp"]["model"] == page_stamp
        moved = {**SKEWED, ("orders", 0): [3, 1]}
        await sync_to_async(synced)(moved)
        changed = await socket.receive_json_from(timeout=5)
        assert changed["stamp"]["model"] != page_stamp and changed["synced_at"]
        await socket.disconnect()

    async_to_sync(scenario)()
