"""Dashboard pages: permissions, what they render, and that they never change state."""

import json

import pytest

from apps.audit.models import AuditEvent
from apps.balancer.engine import propose
from apps.plans.models import Plan
from tests.support.factories import cluster_make, overloaded_snapshot, plan_make

pytestmark = pytest.mark.django_db


def test_it_sends_anonymous_users_to_sign_in(client, cluster):
    plan = plan_make(cluster)
    for url in (
        "/",
        "/clusters/prod/",
        f"/clusters/prod/plans/{plan.pk}/",
        "/clusters/prod/what-if/",
    ):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_it_refuses_users_without_a_role(client, cluster, nobody):
    client.force_login(nobody)
    for url in ("/", "/clusters/prod/", "/clusters/prod/what-if/"):
        assert client.get(url).status_code == 403


def test_it_shows_cluster_health_to_a_viewer(client, cluster, viewer):
    client.force_login(viewer)
    body = client.get("/").content.decode()
    assert 'data-cluster="prod"' in body and "3 / 3" in body
    assert 'data-healthy="true"' in body
    # Replicas 8 / 6 / 2 over brokers: the busiest over the mean is 1.50.
    assert "1.50" in body
    assert "/ws/clusters/" in body  # and keeps it live


def test_it_shows_the_open_proposal_on_the_overview(client, cluster, viewer):
    plan = plan_make(cluster)
    client.force_login(viewer)
    body = client.get("/").content.decode()
    assert f'href="/clusters/prod/plans/{plan.pk}/"' in body and "proposed" in body


def test_it_renders_the_cluster_page_with_heatmap_and_charts(client, cluster, viewer):
    client.force_login(viewer)
    body = client.get("/clusters/prod/").content.decode()
    for broker in (1, 2, 3):
        assert f'data-broker="{broker}" data-alive="true"' in body
    assert 'id="heatmap"' in body and 'data-heatmap-url="/api/clusters/prod/heatmap/"' in body
    assert 'id="chart-network-in"' in body and 'data-topic="orders"' in body
    # plotly.js comes from our own static files, never a CDN.
    assert "/static/plotly/plotly.min.js" in body and "cdn" not in body.lower()
    # A viewer may not request plans.
    assert 'id="plan-request"' not in body


def test_it_shows_one_page_of_topics_and_searches_them(client, viewer):
    cluster_make("wide", {(f"topic-{t:03d}", 0): [1, 2] for t in range(120)})
    client.force_login(viewer)

    body = client.get("/clusters/wide/").content.decode()
    assert body.count('data-topic="topic-') == 50 and 'data-total="120"' in body
    assert "page 1 of 3" in body

    found = client.get("/clusters/wide/", {"topic": "topic-11"}).content.decode()
    assert found.count('data-topic="topic-') == 10  # topic-110 .. topic-119
    assert 'data-topic="topic-110"' in found and 'data-total="10"' in found


def test_it_serves_plotly_from_the_installed_package(client):
    from django.contrib.staticfiles import finders

    path = finders.find("plotly/plotly.min.js")
    assert path and path.endswith("plotly/package_data/plotly.min.js")


def test_it_offers_the_request_form_to_operators(client, cluster, operator):
    client.force_login(operator)
    assert 'id="plan-request"' in client.get("/clusters/prod/").content.decode()


def test_it_shows_approve_only_to_approvers(client, cluster, viewer, approver):
    plan = plan_make(cluster)
    url = f"/clusters/prod/plans/{plan.pk}/"
    client.force_login(viewer)
    body = client.get(url).content.decode()
    assert 'id="plan-state-badge" data-state="proposed"' in body
    assert 'id="approve-button"' not in body and 'id="reject-button"' not in body
    assert "No action is open to you" in body

    client.force_login(approver)
    body = client.get(url).content.decode()
    assert 'id="approve-button"' in body and 'id="reject-button"' in body
    assert f"/api/plans/{plan.pk}/reassignment/" in body  # Kafka JSON export
    assert f'data-url="/clusters/prod/plans/{plan.pk}/loads/"' in body  # bars, on demand
    bars = client.get(f"/clusters/prod/plans/{plan.pk}/loads/").json()
    assert bars["brokers"] == [1, 2, 3] and set(bars["before"]) == set(bars["after"])
    assert bars["before"]["replicas"] != bars["after"]["replicas"]


def test_it_answers_404_for_a_plan_of_another_cluster(client, cluster, viewer):
    cluster_make("other")
    plan = plan_make(cluster)
    client.force_login(viewer)
    assert client.get(f"/clusters/other/plans/{plan.pk}/").status_code == 404
    assert client.get("/clusters/prod/plans/999999/").status_code == 404


def test_it_renders_the_what_if_page_without_changing_anything(client, cluster, viewer):
    client.force_login(viewer)
    before = AuditEvent.objects.count()
    body = client.get("/clusters/prod/what-if/").content.decode()
    assert 'id="whatif-form"' in body and 'value="3"' in body
    assert Plan.objects.count() == 0 and AuditEvent.objects.count() == before


def test_it_explores_the_audit_trail_by_cluster_actor_and_action(client, cluster, viewer):
    ours, theirs = plan_make(cluster), plan_make(cluster_make("other"))
    client.force_login(viewer)
    body = client.get("/audit/", {"cluster": "prod", "action": "plan."}).content.decode()
    assert 'data-action="plan.proposed"' in body and f"plans.plan#{ours.pk}" in body
    assert f"plans.plan#{theirs.pk}" not in body
    body = client.get("/audit/", {"actor": "vic"}).content.decode()
    assert 'data-action="auth.login"' in body and 'data-action="plan.proposed"' not in body
    assert 'id="export-csv"' not in body  # viewers read, admins export


@pytest.mark.parametrize(
    "query", [{"since": "last tuesday"}, {"cluster": "nope"}, {"cluster": "not a slug!"}]
)
def test_it_answers_400_to_a_bad_audit_filter(client, cluster, viewer, query):
    client.force_login(viewer)
    response = client.get("/audit/", query)
    assert response.status_code == 400 and b"invalid filter" in response.content


def test_it_exports_the_filtered_audit_trail_for_admins(client, cluster, viewer, admin_member):
    ours, theirs = plan_make(cluster), plan_make(cluster_make("other"))
    client.force_login(viewer)
    assert client.get("/audit/export.csv").status_code == 403
    client.force_login(admin_member)
    response = client.get("/audit/export.csv", {"cluster": "prod"})
    assert response.status_code == 200 and response["Content-Type"] == "text/csv"
    text = b"".join(response.streaming_content).decode()
    assert f",plans.plan,{ours.pk}," in text and f",plans.plan,{theirs.pk}," not in text
    response = client.get("/audit/export.json", {"cluster": "other", "action": "plan."})
    rows = json.loads(b"".join(response.streaming_content))
    assert [(r["action"], r["object_id"]) for r in rows] == [("plan.proposed", str(theirs.pk))]


def test_it_shows_when_an_unreachable_cluster_is_tried_next(client, cluster, viewer):
    from datetime import timedelta

    from django.utils import timezone

    from apps.clusters.models import ClusterRound

    now = timezone.now()
    cluster.last_sync_error, cluster.last_sync_error_at = "unreachable: refused", now
    cluster.sync_failures, cluster.next_sync_at = 4, now + timedelta(minutes=2, seconds=5)
    cluster.save()
    ClusterRound.objects.create(cluster=cluster, kind="sync", skipped=3, last_skipped_at=now)
    ClusterRound.objects.create(
        cluster=cluster, kind="sample", last_degraded="DescribeLogDirs: denied"
    )
    client.force_login(viewer)
    body = client.get("/clusters/prod/").content.decode()
    assert "Unreachable — next try in 2\xa0minutes" in body
    assert "4 failed in a row" in body
    assert "3 sync rounds skipped because the previous one still ran" in body
    assert "Last sample round went without: DescribeLogDirs: denied" in body


def test_it_offers_execution_control_of_a_running_plan_to_operators(
    client, cluster, viewer, operator
):
    from apps.plans.models import Execution, PlanState
    from apps.plans.services import execution_pause

    plan = plan_make(cluster)
    Plan.objects.filter(pk=plan.pk).update(state=PlanState.EXECUTING)
    Execution.objects.create(plan=plan, throttle_rate=4 * 1024 * 1024)
    url = f"/clusters/prod/plans/{plan.pk}/"
    client.force_login(viewer)
    body = client.get(url).content.decode()
    assert 'id="plan-control"' in body and "4.0\xa0MiB/s" in body
    assert 'id="pause-button"' not in body and 'id="tune-form"' not in body

    client.force_login(operator)
    body = client.get(url).content.decode()
    assert 'id="pause-button"' in body and 'id="tune-form"' in body
    execution_pause(plan=plan, user=operator)
    body = client.get(url).content.decode()
    assert 'id="paused-badge"' in body and 'id="resume-button"' in body
    assert 'id="pause-button"' not in body


def test_it_shows_unmet_hard_goals_and_unplaced_partitions_on_the_plan_page(
    client, cluster, viewer
):
    # the report of a snapshot no plan can fully balance, as the engine writes it
    plan = plan_make(cluster)
    # as plan creation adds it: left out of the snapshot, RF 3 over 2 alive brokers
    plan.report = {**propose(overloaded_snapshot()).report, "unplaceable": ["__balancer_metrics-0"]}
    plan.save(update_fields=["report"])
    client.force_login(viewer)
    body = client.get(f"/clusters/prod/plans/{plan.pk}/").content.decode()
    assert 'id="plan-unmet-goals"' in body
    assert 'data-goal="network-in-capacity"' in body
    assert "<td>70</td><td>30</td><td>3</td>" in body  # before -> after, offenders
    assert "broker 1 above the band: 0.90 × capacity, band up to 0.80" in body
    assert 'data-partition="big-0"' in body
    assert "no broker can take a replica without breaking a hard goal" in body
    assert 'data-partition="lost-0"' in body and "every replica is on a dead broker" in body
    assert 'data-partition="__balancer_metrics-0"' in body
    assert "more replicas than alive brokers" in body
    assert "could not place (3)" in body


def test_it_shows_no_shortfall_section_when_the_plan_meets_every_hard_goal(client, cluster, viewer):
    plan = plan_make(cluster)
    client.force_login(viewer)
    body = client.get(f"/clusters/prod/plans/{plan.pk}/").content.decode()
    assert 'id="plan-unmet-goals"' not in body and 'id="plan-unplaced"' not in body
