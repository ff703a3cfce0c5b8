"""REST API: every endpoint, signed out (401), without a role (403), with malformed
input (400, nothing changed) and working; plan decisions through the lifecycle."""

import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone
from rest_framework.test import APIClient

from apps.api.models import ApiToken, token_digest
from apps.audit.models import AuditEvent
from apps.balancer.engine import propose
from apps.clusters.models import Cluster
from apps.plans.models import ClusterPolicy, Plan, PlanState
from tests.support.factories import (
    SKEWED,
    cluster_apply,
    cluster_make,
    loads_make,
    overloaded_snapshot,
    plan_make,
    user_make,
)

pytestmark = pytest.mark.django_db

READ_ONLY = [
    "/api/clusters/",
    "/api/clusters/prod/",
    "/api/clusters/prod/brokers/",
    "/api/clusters/prod/topics/",
    "/api/clusters/prod/partitions/",
    "/api/clusters/prod/heatmap/",
    "/api/clusters/prod/traffic/",
    "/api/clusters/prod/loads/brokers/",
    "/api/clusters/prod/loads/partitions/",
    "/api/clusters/prod/plans/",
    "/api/plans/{plan}/",
    "/api/plans/{plan}/moves/",
    "/api/plans/{plan}/reassignment/",
    "/api/audit/",
]
ACTIONS = [
    "/api/clusters/prod/plans/",
    "/api/clusters/prod/what-if/",
    "/api/plans/{plan}/approve/",
    "/api/plans/{plan}/reject/",
    "/api/plans/{plan}/execute/",
    "/api/plans/{plan}/cancel/",
    "/api/plans/{plan}/rollback/",
    "/api/plans/{plan}/pause/",
    "/api/plans/{plan}/resume/",
    "/api/plans/{plan}/tune/",
]


def snapshot_of_state() -> tuple:
    return (
        list(Plan.objects.values_list("pk", "state").order_by("pk")),
        AuditEvent.objects.exclude(action__startswith="auth.").count(),
    )


# --- who may call ------------------------------------------------------------------


@pytest.mark.parametrize("url", READ_ONLY + ["/api/schema/"])
def test_it_answers_401_to_anonymous_reads(api, plan, url):
    response = api.get(url.format(plan=plan.pk))
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Token")


@pytest.mark.parametrize("url", ACTIONS)
def test_it_answers_401_to_anonymous_actions_and_changes_nothing(api, plan, url):
    before = snapshot_of_state()
    assert api.post(url.format(plan=plan.pk), {"mode": "full", "reason": "x"}).status_code == 401
    assert snapshot_of_state() == before


@pytest.mark.parametrize("url", READ_ONLY + ACTIONS)
def test_it_answers_403_to_users_without_a_role(as_role, plan, url):
    client = as_role(None)
    before = snapshot_of_state()
    response = (client.post if url in ACTIONS else client.get)(url.format(plan=plan.pk), {})
    assert response.status_code == 403
    assert snapshot_of_state() == before


@pytest.mark.parametrize("url", READ_ONLY)
def test_it_lets_a_viewer_read_everything(as_role, plan, url):
    assert as_role("viewer").get(url.format(plan=plan.pk)).status_code == 200


def test_it_authenticates_with_a_token(api, cluster):
    user = User.objects.create_user("bot", password="s3cret-pass")
    user.groups.add(Group.objects.get(name="viewer"))
    response = api.post("/api/auth/token/", {"username": "bot", "password": "s3cret-pass"})
    assert response.status_code == 200
    token = response.json()["token"]
    assert ApiToken.objects.get(user=user).digest == token_digest(token)
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert api.get("/api/clusters/").json()[0]["cluster"]["name"] == "prod"
    api.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert api.get("/api/clusters/").status_code == 401
    api.credentials()
    assert api.post("/api/auth/token/", {"username": "bot", "password": "wrong"}).status_code == 400


def test_it_needs_a_csrf_token_for_session_posts(plan, db):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user_make("anna", "approver"))
    response = client.post(f"/api/plans/{plan.pk}/approve/", {}, format="json")
    assert response.status_code == 403 and "CSRF" in response.json()["detail"]
    plan.refresh_from_db()
    assert plan.state == PlanState.PROPOSED


def test_it_serves_an_openapi_schema_of_every_endpoint(as_role):
    response = as_role("viewer").get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = set(response.json()["paths"])
    for url in READ_ONLY + ACTIONS:
        assert url.replace("prod", "{name}").replace("{plan}", "{plan_id}") in paths


# --- clusters, brokers, topics, partitions, heatmap, loads ----------------------------


def test_it_lists_clusters_with_health(as_role, plan):
    [row] = as_role("viewer").get("/api/clusters/").json()
    assert row["cluster"]["name"] == "prod" and "client_config" not in row["cluster"]
    assert (row["brokers_alive"], row["brokers_total"], row["partitions"]) == (3, 3, 8)
    assert row["balance"]["replicas"] == pytest.approx(1.5)
    assert row["open_plan"]["id"] == plan.pk and row["running_plan"] is None


def test_it_answers_404_for_an_unknown_cluster_or_plan(as_role, cluster):
    client = as_role("viewer")
    assert client.get("/api/clusters/nope/brokers/").status_code == 404
    assert client.get("/api/plans/999999/").status_code == 404
    assert as_role("approver").post("/api/plans/999999/approve/", {}).status_code == 404


def test_it_lists_brokers_topics_and_partitions(as_role, cluster):
    client = as_role("viewer")
    brokers = client.get("/api/clusters/prod/brokers/").json()
    assert [(b["broker"]["node_id"], b["replicas"]) for b in brokers] == [(1, 8), (2, 6), (3, 2)]
    topics = {t["name"]: t for t in client.get("/api/clusters/prod/topics/").json()}
    assert topics["orders"]["partitions"] == 6 and topics["orders"]["replication_factor"] == 2
    page = client.get("/api/clusters/prod/partitions/", {"topic": "audit-log", "broker": 3}).json()
    assert page["count"] == 2 and {p["index"] for p in page["results"]} == {0, 1}


@pytest.mark.parametrize(
    "url, query",
    [
        ("/api/clusters/prod/partitions/", {"broker": "three"}),
        ("/api/clusters/prod/partitions/", {"broker": "-1"}),
        ("/api/clusters/prod/heatmap/", {"metric": "cpu"}),
        ("/api/clusters/prod/heatmap/", {"internal": "maybe"}),
        ("/api/clusters/prod/heatmap/", {"sort": "random"}),
        ("/api/clusters/prod/heatmap/", {"limit": "0"}),
        ("/api/clusters/prod/traffic/", {"windows": "0"}),
        ("/api/clusters/prod/traffic/", {"windows": "lots"}),
        ("/api/clusters/prod/loads/brokers/", {"since": "yesterday"}),
        ("/api/clusters/prod/loads/partitions/", {"since": "2026-01-02", "until": "2026-01-01"}),
        ("/api/plans/{plan}/moves/", {"ordering": "random"}),
        ("/api/plans/{plan}/moves/", {"broker": "x"}),
        ("/api/plans/{plan}/reassignment/", {"which": "both"}),
        ("/api/clusters/prod/plans/", {"state": "happy"}),
        ("/api/audit/", {"since": "not a date"}),
        ("/api/audit/", {"cluster": "nope"}),
    ],
)
def test_it_answers_400_naming_a_bad_query_parameter(as_role, plan, url, query):
    response = as_role("viewer").get(url.format(plan=plan.pk), query)
    assert response.status_code == 400
    body = response.json()
    assert set(query) & set(body) or "non_field_errors" in body, body


def test_it_serves_the_heatmap(as_role, cluster):
    client = as_role("viewer")
    body = client.get("/api/clusters/prod/heatmap/", {"metric": "leaders", "sort": "name"}).json()
    assert body["brokers"] == [1, 2, 3] and body["topics"] == ["audit-log", "orders"]
    assert body["z"] == [[1, 0, 1], [3, 3, 0]] and body["unit"] == "leaders"

    page = client.get("/api/clusters/prod/heatmap/", {"metric": "leaders", "limit": 1}).json()
    assert page["topics"] == ["orders"] and page["topics_total"] == 2
    assert (page["other_topics"], page["other"]) == (1, [1, 0, 1])


def test_it_serves_loads_and_traffic(as_role, cluster):
    start = timezone.now().replace(microsecond=0) - timedelta(minutes=3)
    loads_make(cluster, start, {("orders", 0): (100.0, 40.0, 7.0), ("orders", 1): (10.0, 0, 1.0)})
    client = as_role("viewer")
    brokers = client.get("/api/clusters/prod/loads/brokers/").json()
    assert brokers["count"] == 2
    assert {r["broker_id"]: r["network_in"] for r in brokers["results"]} == {1: 110.0, 2: 110.0}
    parts = client.get("/api/clusters/prod/loads/partitions/", {"topic": "orders"}).json()
    assert {(r["partition"], r["bytes_in"]) for r in parts["results"]} == {(0, 100.0), (1, 10.0)}
    later = client.get(
        "/api/clusters/prod/loads/partitions/", {"since": start + timedelta(seconds=1)}
    )
    assert later.json()["count"] == 0
    traffic = client.get("/api/clusters/prod/traffic/").json()
    assert len(traffic["windows"]) == 1 and traffic["series"]["1"]["messages_in"] == [7.0]
    heat = client.get("/api/clusters/prod/heatmap/", {"metric": "network_in"}).json()
    assert heat["z"][heat["topics"].index("orders")] == [110.0, 110.0, 0.0]


def test_it_pages_partition_loads_across_topics_and_windows_in_order(as_role, cluster):
    start = timezone.now().replace(microsecond=0) - timedelta(minutes=5)
    loads = {
        ("audit-log", 0): (1.0, 0, 1.0),
        **{("orders", i): (float(i), 0, 1.0) for i in range(3)},
    }
    loads_make(cluster, start, loads)
    loads_make(cluster, start + timedelta(minutes=1), loads)
    client = as_role("viewer")
    seen = []
    for offset in range(0, 8, 3):
        page = client.get(
            "/api/clusters/prod/loads/partitions/", {"limit": 3, "offset": offset}
        ).json()
        assert page["count"] == 8
        seen += [(r["window_start"], r["topic"], r["partition"]) for r in page["results"]]
    # Newest window first, then by topic and partition: each row once, none skipped.
    newest, oldest = sorted({w for w, _, _ in seen}, reverse=True)
    keys = [("audit-log", 0), ("orders", 0), ("orders", 1), ("orders", 2)]
    assert seen == [(newest, *k) for k in keys] + [(oldest, *k) for k in keys]
    beyond = client.get("/api/clusters/prod/loads/partitions/", {"offset": 8}).json()
    assert beyond["count"] == 8 and beyond["results"] == []


# --- plans ---------------------------------------------------------------------------


def test_it_lets_an_operator_request_a_plan(as_role, cluster):
    response = as_role("operator").post(
        "/api/clusters/prod/plans/", {"mode": "full", "reason": "weekly"}, format="json"
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["state"] == "proposed" and body["request_reason"] == "weekly"
    assert body["actions"]["approve"] is False  # operators request, approvers decide
    assert AuditEvent.objects.filter(action="plan.proposed", object_id=str(body["id"])).exists()


@pytest.mark.parametrize(
    "body, status, message",
    [
        ({}, 400, "mode"),
        ({"mode": "shuffle"}, 400, "mode"),
        ({"mode": "add-brokers", "brokers": ["four"]}, 400, "brokers"),
        ({"mode": "add-brokers", "brokers": [42]}, 400, "broker 42 is not part"),
        ({"mode": "add-brokers"}, 400, "needs the broker ids"),
        ({"mode": "full", "reason": "x" * 2001}, 400, "reason"),
    ],
)
def test_it_refuses_a_malformed_plan_request(as_role, cluster, body, status, message):
    before = snapshot_of_state()
    response = as_role("operator").post("/api/clusters/prod/plans/", body, format="json")
    assert response.status_code == status
    assert message in str(response.json())
    assert snapshot_of_state() == before


def test_it_refuses_a_plan_request_from_a_viewer(as_role, cluster):
    response = as_role("viewer").post("/api/clusters/prod/plans/", {"mode": "full"}, format="json")
    assert response.status_code == 403 and "not allowed" in response.json()["detail"]
    assert not Plan.objects.exists()


def test_it_approves_through_the_lifecycle(as_role, plan, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        response = as_role("approver").post(
            f"/api/plans/{plan.pk}/approve/", {"reason": "looks right"}, format="json"
        )
    assert response.status_code == 200, response.json()
    assert response.json()["state"] == "approved"
    plan.refresh_from_db()
    assert plan.state == PlanState.APPROVED and plan.decision_reason == "looks right"
    event = AuditEvent.objects.get(action="plan.approved", object_id=str(plan.pk))
    assert event.actor == "user-approver" and event.reason == "looks right"
    assert callbacks  # the execution (and the live push) are queued for after commit


def test_it_refuses_and_audits_a_viewers_forged_approve(as_role, plan):
    response = as_role("viewer").post(f"/api/plans/{plan.pk}/approve/", {}, format="json")
    assert response.status_code == 403
    assert "not allowed to approve" in response.json()["detail"]
    plan.refresh_from_db()
    assert plan.state == PlanState.PROPOSED
    event = AuditEvent.objects.get(action="plan.approve_refused")
    assert event.actor == "user-viewer" and event.object_id == str(plan.pk)
    assert "not allowed" in event.reason and event.client_address == "127.0.0.1"


@pytest.mark.parametrize(
    "action, body, status",
    [
        ("approve", {"confirm_data_loss": "perhaps"}, 400),
        ("approve", {"reason": ["a", "list"]}, 400),
        ("reject", {}, 400),
        ("reject", {"reason": "   "}, 400),
        ("execute", {}, 409),
        ("cancel", {}, 409),
        ("rollback", {}, 409),
    ],
)
def test_it_refuses_bad_decisions_and_changes_nothing(as_role, plan, action, body, status):
    before = snapshot_of_state()
    response = as_role("admin").post(f"/api/plans/{plan.pk}/{action}/", body, format="json")
    assert response.status_code == status, response.json()
    assert snapshot_of_state() == before


def test_it_refuses_a_non_json_body(as_role, plan):
    response = as_role("approver").post(
        f"/api/plans/{plan.pk}/approve/", "{not json", content_type="application/json"
    )
    assert response.status_code == 400 and "JSON parse error" in response.json()["detail"]
    plan.refresh_from_db()
    assert plan.state == PlanState.PROPOSED


def test_it_rejects_with_a_reason(as_role, plan):
    response = as_role("approver").post(
        f"/api/plans/{plan.pk}/reject/", {"reason": "not during the sale"}, format="json"
    )
    assert response.status_code == 200 and response.json()["state"] == "rejected"
    assert AuditEvent.objects.get(action="plan.rejected").reason == "not during the sale"
    again = as_role("approver").post(f"/api/plans/{plan.pk}/approve/", {}, format="json")
    assert again.status_code == 409 and "rejected" in again.json()["detail"]


def test_it_starts_and_cancels_an_approved_plan(as_role, plan, django_capture_on_commit_callbacks):
    admin = as_role("admin")
    assert admin.post(f"/api/plans/{plan.pk}/approve/", {}, format="json").status_code == 200
    with django_capture_on_commit_callbacks() as callbacks:
        response = admin.post(f"/api/plans/{plan.pk}/execute/", {}, format="json")
    assert response.status_code == 200 and callbacks
    assert AuditEvent.objects.filter(action="plan.execution_requested").count() == 1
    assert as_role("viewer").post(f"/api/plans/{plan.pk}/execute/", {}).status_code == 403
    response = as_role("approver").post(f"/api/plans/{plan.pk}/cancel/", {"reason": "later"})
    assert response.status_code == 200 and response.json()["state"] == "cancelled"


def test_it_rolls_back_a_completed_plan(as_role, plan, cluster):
    # As if the executor had run it: the plan is completed and the cluster moved.
    after = {(m.topic, m.partition): m.replicas_after for m in plan.moves.all()}
    cluster_apply(cluster, SKEWED | after)
    Plan.objects.filter(pk=plan.pk).update(state=PlanState.COMPLETED)

    response = as_role("admin").post(f"/api/plans/{plan.pk}/rollback/", {"reason": "undo"})
    assert response.status_code == 201, response.json()
    rollback = Plan.objects.get(pk=response.json()["id"])
    assert rollback.rollback_of_id == plan.pk and rollback.state == PlanState.PROPOSED
    assert as_role("viewer").post(f"/api/plans/{plan.pk}/rollback/", {}).status_code == 403


def test_it_shows_a_plan_with_progress_actions_and_eta(as_role, plan):
    body = as_role("approver").get(f"/api/plans/{plan.pk}/").json()
    assert body["actions"] == {
        "approve": True,
        "reject": True,
        "execute": False,
        "cancel": False,
        "rollback": False,
        "pause": False,
        "resume": False,
        "tune": False,
    }
    assert body["progress"]["moves_total"] == plan.moves.count()
    assert body["report"]["balance"]["replicas"]["before"] == pytest.approx(1.5)
    assert body["eta_seconds_at_throttle"] is not None


def test_it_lists_moves_sorted_and_filtered(as_role, plan):
    client = as_role("viewer")
    moves = client.get(f"/api/plans/{plan.pk}/moves/", {"ordering": "-topic"}).json()
    assert moves["count"] == plan.moves.count()
    topics = [m["topic"] for m in moves["results"]]
    assert topics == sorted(topics, reverse=True)
    to_3 = client.get(f"/api/plans/{plan.pk}/moves/", {"broker": 3}).json()["results"]
    assert to_3 and all(3 in m["replicas_before"] + m["replicas_after"] for m in to_3)
    assert all(m["goals"] for m in moves["results"])  # the goal behind each move


def test_it_exports_kafka_reassignment_json(as_role, plan):
    client = as_role("viewer")
    response = client.get(f"/api/plans/{plan.pk}/reassignment/")
    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    assert json.loads(response.content) == plan.reassignment
    rollback = client.get(f"/api/plans/{plan.pk}/reassignment/", {"which": "rollback"})
    assert json.loads(rollback.content) == plan.rollback_reassignment


def test_it_filters_plans_by_state(as_role, plan):
    client = as_role("viewer")
    assert client.get("/api/clusters/prod/plans/", {"state": "proposed"}).json()["count"] == 1
    assert client.get("/api/clusters/prod/plans/", {"state": "approved"}).json()["count"] == 0


# --- what-if ---------------------------------------------------------------------------


def test_it_simulates_a_new_broker_without_proposing_anything(as_role, cluster):
    before = snapshot_of_state()
    response = as_role("viewer").post(
        "/api/clusters/prod/what-if/", {"add_brokers": [{"id": 4, "rack": "d"}]}, format="json"
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["mode"] == "add-brokers" and body["brokers"] == [4]
    assert body["loads"]["brokers"] == [1, 2, 3, 4]
    assert body["loads"]["before"]["replicas"][3] == 0 and body["loads"]["after"]["replicas"][3] > 0
    assert all(4 in e["replicas"] for e in body["plan"]["partitions"])
    assert snapshot_of_state() == before


def test_it_simulates_draining_a_broker(as_role, cluster):
    body = (
        as_role("viewer")
        .post(
            "/api/clusters/prod/what-if/",
            {"remove_brokers": [3], "traffic_scale": 2},
            format="json",
        )
        .json()
    )
    assert body["mode"] == "remove-brokers" and body["loads"]["after"]["replicas"][2] == 0


def test_it_drains_one_of_three_brokers_with_the_rf_3_metrics_topic(as_role, db):
    # The balancer's own topic at RF 3 on 3 brokers: the drain lowers its RF to the 2
    # brokers left (it holds nothing the product can't recreate), excluded or not.
    cluster_make("small", {**SKEWED, **{("__balancer_metrics", i): [1, 2, 3] for i in range(2)}})
    client = as_role("viewer")
    for exclude in ([], ["__balancer_metrics"]):
        ClusterPolicy.objects.update_or_create(
            cluster=Cluster.objects.get(name="small"), defaults={"topics_exclude": exclude}
        )
        response = client.post(
            "/api/clusters/small/what-if/", {"remove_brokers": [3]}, format="json"
        )
        assert response.status_code == 200, response.json()
        body = response.json()
        assert body["mode"] == "remove-brokers" and body["loads"]["after"]["replicas"][2] == 0
        drained = {(e["topic"], e["partition"]): e["replicas"] for e in body["plan"]["partitions"]}
        assert drained == {
            ("audit-log", 0): drained[("audit-log", 0)],
            ("audit-log", 1): drained[("audit-log", 1)],
            ("__balancer_metrics", 0): [1, 2],
            ("__balancer_metrics", 1): [1, 2],
        }
        assert "lowered from 3 to 2" in body["report"]["rf_lowered"]["note"]
    assert not Plan.objects.exists()


def test_a_user_topic_at_rf_3_on_3_brokers_refuses_a_drain(as_role, db):
    cluster_make("small", {**SKEWED, ("payments", 0): [1, 2, 3]})
    refused = as_role("viewer").post(
        "/api/clusters/small/what-if/", {"remove_brokers": [3]}, format="json"
    )
    assert refused.status_code == 400
    reason = str(refused.json())
    assert "payments-0 has 3 replicas but only 2" in reason
    assert "not counting those being removed" in reason


@pytest.mark.parametrize(
    "body, message",
    [
        ({"add_brokers": [{"id": 2}]}, "already exists"),
        ({"add_brokers": [{"rack": "d"}]}, "id"),
        ({"remove_brokers": [9]}, "not part of cluster"),
        ({"add_brokers": [{"id": 4}], "remove_brokers": [1]}, "not both"),
        ({"traffic_scale": 0}, "traffic_scale"),
        ({"traffic_scale": "fast"}, "traffic_scale"),
        ({"remove_brokers": [1, 2, 3]}, "planner refused"),
    ],
)
def test_it_refuses_a_malformed_what_if(as_role, cluster, body, message):
    response = as_role("viewer").post("/api/clusters/prod/what-if/", body, format="json")
    assert response.status_code == 400 and message in str(response.json())
    assert not Plan.objects.exists()


# --- audit -----------------------------------------------------------------------------


def test_it_lists_and_filters_the_audit_trail(as_role, plan):
    other = cluster_make("other")
    theirs = plan_make(other)
    client = as_role("viewer")
    page = client.get("/api/audit/", {"cluster": "prod", "action": "plan."}).json()
    assert [(e["action"], e["object_id"]) for e in page["results"]] == [
        ("plan.proposed", str(plan.pk))
    ]
    assert client.get("/api/audit/", {"actor": "plan-requester"}).json()["count"] == 2
    future = timezone.now() + timedelta(hours=1)
    assert client.get("/api/audit/", {"since": future.isoformat()}).json()["count"] == 0
    assert theirs.pk != plan.pk


def test_it_gives_unmet_hard_goals_and_unplaced_partitions_with_the_plan(as_role, plan):
    plan.report = {**propose(overloaded_snapshot()).report, "unplaceable": ["__balancer_metrics-0"]}
    plan.save(update_fields=["report"])
    body = as_role("viewer").get(f"/api/plans/{plan.pk}/").json()
    goals = {g["name"]: g for g in body["unmet_hard_goals"]}
    net = goals["network-in-capacity"]
    assert net["violation_before"] == pytest.approx(70.0)
    assert net["violation_after"] == pytest.approx(30.0)
    assert net["offenders"] == 3
    assert net["worst"].startswith("broker 1 above the band")
    assert {u["partition"]: u["reason"] for u in body["unplaced_partitions"]} == {
        "big-0": "no broker can take a replica without breaking a hard goal",
        "lost-0": "every replica is on a dead broker; healing it would lose its data",
        "__balancer_metrics-0": (
            "more replicas than alive brokers to hold them; left out of the plan"
        ),
    }


def test_it_gives_empty_shortfalls_for_a_plan_that_meets_every_hard_goal(as_role, plan):
    body = as_role("viewer").get(f"/api/plans/{plan.pk}/").json()
    assert body["unmet_hard_goals"] == [] and body["unplaced_partitions"] == []
