"""Live answers shared between viewers: after a push, the cluster page's regions and
its heatmap and traffic are built once per cluster state (the pushed stamp) and served
to every other viewer from the cache, never to a viewer who may not see them."""

import pytest
from django.contrib.auth.models import User

from apps.access.models import Grant
from apps.access.roles import Role
from apps.api.metrics import views as api_views
from apps.dashboard import views_live
from apps.metrics.selectors import cluster_state_stamp, stamp_token
from tests.support.factories import SKEWED, cluster_apply, cluster_make, plan_make

pytestmark = pytest.mark.django_db


@pytest.fixture
def builds(monkeypatch) -> list[str]:
    """Names the answers actually built (not served from the cache)."""
    built: list[str] = []

    def counting(module, name):
        real = getattr(module, name)

        def wrapper(**kwargs):
            built.append(name)
            return real(**kwargs)

        monkeypatch.setattr(module, name, wrapper)

    counting(views_live, "broker_rows_list")
    counting(api_views, "heatmap_get")
    counting(api_views, "broker_traffic_series")
    return built


@pytest.fixture
def other_cluster_viewer(db) -> User:
    """A viewer of another cluster only."""
    user = User.objects.create_user("cleo")
    Grant.objects.create(role=Role.VIEWER, user=user, cluster=cluster_make(name="other"))
    return user


def live(client, user, token: str, **params) -> dict:
    client.force_login(user)
    response = client.get("/clusters/prod/live/", {"stamp": token, **params})
    assert response.status_code == 200
    return response.json()


def test_it_builds_the_regions_once_per_stamp_for_every_viewer(
    client, cluster, viewer, operator, builds
):
    token = stamp_token(cluster_state_stamp(cluster_id=cluster.pk))
    first = live(client, viewer, token)
    second = live(client, operator, token)
    assert builds == ["broker_rows_list"]
    assert second == first
    assert set(first["regions"]) == {"cluster-summary", "brokers-live", "plans-live", "topics-live"}
    assert 'data-broker="3" data-alive="true"' in first["regions"]["brokers-live"]
    assert first["stamp"] == cluster_state_stamp(cluster_id=cluster.pk)


def test_it_builds_again_when_the_model_changes(client, cluster, viewer, builds):
    before = live(client, viewer, stamp_token(cluster_state_stamp(cluster_id=cluster.pk)))
    cluster_apply(cluster, SKEWED, alive=(1, 2))
    stamp = cluster_state_stamp(cluster_id=cluster.pk)
    after = live(client, viewer, stamp_token(stamp))
    assert builds == ["broker_rows_list", "broker_rows_list"]
    assert after["stamp"] == stamp != before["stamp"]
    assert 'data-broker="3" data-alive="false"' in after["regions"]["brokers-live"]


def test_it_builds_again_when_a_plan_changes_under_the_same_stamp(client, cluster, viewer, builds):
    token = stamp_token(cluster_state_stamp(cluster_id=cluster.pk))
    assert "No plan yet." in live(client, viewer, token)["regions"]["plans-live"]
    plan = plan_make(cluster)
    regions = live(client, viewer, token)["regions"]
    assert f'data-plan="{plan.pk}"' in regions["plans-live"]
    assert f'data-plan="{plan.pk}"' in regions["cluster-summary"]  # the open proposal


def test_it_never_serves_a_cluster_to_a_viewer_of_another_one(
    client, cluster, viewer, other_cluster_viewer
):
    plan = plan_make(cluster)
    token = stamp_token(cluster_state_stamp(cluster_id=cluster.pk))
    assert f'data-plan="{plan.pk}"' in live(client, viewer, token)["regions"]["plans-live"]
    client.force_login(other_cluster_viewer)
    assert client.get("/clusters/prod/live/", {"stamp": token}).status_code == 404


def test_it_shares_only_the_same_topic_search_and_page(client, cluster, viewer, builds):
    token = stamp_token(cluster_state_stamp(cluster_id=cluster.pk))
    everything = live(client, viewer, token)["regions"]["topics-live"]
    searched = live(client, viewer, token, topic="audit")["regions"]["topics-live"]
    assert 'data-topic="orders"' in everything and 'data-topic="orders"' not in searched
    assert 'data-topic="audit-log"' in searched
    assert builds == ["broker_rows_list", "broker_rows_list"]


def test_it_never_files_an_answer_under_a_stamp_a_client_made_up(client, cluster, viewer, builds):
    for _ in range(2):
        answer = live(client, viewer, "made-up|stamp")
        assert answer["stamp"] == cluster_state_stamp(cluster_id=cluster.pk)
    # Built once (under the real stamp), then found there: never under the made-up one.
    assert builds == ["broker_rows_list"]
    live(client, viewer, "made-up|stamp")
    assert builds == ["broker_rows_list"]


def test_it_refuses_the_regions_to_who_may_not_see_the_cluster(client, cluster, nobody):
    assert client.get("/clusters/prod/live/").status_code == 302  # to sign in
    client.force_login(nobody)
    assert client.get("/clusters/prod/live/").status_code == 403


def test_it_answers_404_for_an_unknown_cluster(client, cluster, viewer):
    client.force_login(viewer)
    assert client.get("/clusters/nope/live/").status_code == 404


def test_it_shares_the_heatmap_and_traffic_of_a_stamp(client, cluster, viewer, operator, builds):
    token = stamp_token(cluster_state_stamp(cluster_id=cluster.pk))
    answers = []
    for user in (viewer, operator):
        client.force_login(user)
        for url in ("/api/clusters/prod/heatmap/", "/api/clusters/prod/traffic/"):
            response = client.get(url, {"stamp": token})
            assert response.status_code == 200
            answers.append(response.json())
    assert builds == ["heatmap_get", "broker_traffic_series"]
    assert answers[:2] == answers[2:]
    # The same as a request without a stamp, which is always built afresh.
    assert client.get("/api/clusters/prod/heatmap/").json() == answers[0]
    assert builds[-1] == "heatmap_get" and len(builds) == 3


def test_it_keys_the_shared_heatmap_by_its_query(client, cluster, viewer, builds):
    token = stamp_token(cluster_state_stamp(cluster_id=cluster.pk))
    client.force_login(viewer)
    replicas = client.get("/api/clusters/prod/heatmap/", {"stamp": token}).json()
    leaders = client.get(
        "/api/clusters/prod/heatmap/", {"stamp": token, "metric": "leaders"}
    ).json()
    assert (replicas["metric"], leaders["metric"]) == ("replicas", "leaders")
    assert builds == ["heatmap_get", "heatmap_get"]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_trusts_a_stamp_this_process_pushed_without_reading_it_again(
    client, viewer, monkeypatch, settings
):
    from asgiref.sync import async_to_sync, sync_to_async
    from channels.testing import WebsocketCommunicator

    from apps.dashboard.events import cluster_changed_send
    from apps.metrics.selectors import shared
    from balancer_site.asgi import application
    from tests.support.factories import cluster_make

    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    cluster = cluster_make()
    stamp = cluster_state_stamp(cluster_id=cluster.pk)
    reads: list[int] = []
    real_read = shared.cluster_state_stamp

    def counted(*, cluster_id: int) -> dict[str, str]:
        reads.append(cluster_id)
        return real_read(cluster_id=cluster_id)

    monkeypatch.setattr(shared, "cluster_state_stamp", counted)
    client.force_login(viewer)
    session = client.cookies["sessionid"].value
    socket = WebsocketCommunicator(
        application,
        "/ws/clusters/prod/",
        headers=[(b"origin", b"http://127.0.0.1"), (b"cookie", f"sessionid={session}".encode())],
    )

    async def scenario():
        assert (await socket.connect())[0]
        assert (await socket.receive_json_from(timeout=5))["type"] == "hello"
        await sync_to_async(cluster_changed_send)(cluster_id=cluster.pk, stamp=stamp)
        assert (await socket.receive_json_from(timeout=5))["stamp"] == stamp
        await socket.disconnect()

    async_to_sync(scenario)()
    answer = live(client, viewer, stamp_token(stamp))
    assert answer["stamp"] == stamp and reads == []
    # Any other token is checked against the model.
    live(client, viewer, "made-up|stamp")
    assert reads == [cluster.pk]
