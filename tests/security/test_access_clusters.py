"""Per-cluster roles (issue 24, item 1): a grant on one cluster gives nothing on another,
and a user sees no trace of a cluster they hold no grant on (404, not 403)."""

import json

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import Group, User

from apps.access.models import Grant
from apps.access.roles import Role
from apps.audit.models import AuditEvent
from apps.audit.services import audit_record
from apps.clusters.actions import ClusterAction
from apps.notifications.models import NotificationChannel
from apps.plans.errors import PlanPermissionDenied
from apps.plans.models import PlanState
from apps.plans.services import plan_approve, plan_request
from tests.dashboard.test_live import close_code, memory_layer, socket_for  # noqa: F401
from tests.support.factories import SKEWED, cluster_apply, cluster_make, plan_make, user_granted

pytestmark = pytest.mark.django_db


@pytest.fixture
def prod():
    return cluster_make("prod")


@pytest.fixture
def dev():
    cluster = cluster_make("zeta-ops")
    cluster_apply(cluster, SKEWED)
    return cluster


def test_it_shows_an_operator_of_one_cluster_no_trace_of_another(client, prod, dev):
    olga = user_granted("olga", Role.OPERATOR, prod)
    dev_plan = plan_make(dev)
    NotificationChannel.objects.create(cluster=dev, name="zeta-ops-hook", url="https://x.example/h")
    client.force_login(olga)

    assert client.get("/clusters/prod/").status_code == 200
    for path in (
        "/clusters/zeta-ops/",
        f"/clusters/zeta-ops/plans/{dev_plan.pk}/",
        "/clusters/zeta-ops/what-if/",
        "/clusters/zeta-ops/live/",
        "/api/clusters/zeta-ops/",
        f"/api/plans/{dev_plan.pk}/",
        "/api/clusters/zeta-ops/plans/",
    ):
        assert client.get(path).status_code == 404, path
    whatif = client.post(
        "/api/clusters/zeta-ops/what-if/", {"remove_brokers": [3]}, content_type="application/json"
    )
    assert whatif.status_code == 404
    names = [h["cluster"]["name"] for h in client.get("/api/clusters/").json()]
    assert names == ["prod"]
    overview = client.get("/").content.decode()
    assert "prod" in overview and "/clusters/zeta-ops/" not in overview
    # The audit trail: no event of dev, on the page, the API or the export.
    assert AuditEvent.objects.filter(cluster_id=dev.pk).exists()
    audit_record(actor=olga, action=ClusterAction.CHANGED, obj=prod, reason="prod-event")
    api_events = client.get("/api/audit/").json()["results"]
    assert [e["reason"] for e in api_events] == ["prod-event"]
    assert "zeta-ops" not in client.get("/audit/").content.decode()
    # An operator exports nothing; a notifications page is for admins.
    assert client.get("/audit/export.json").status_code == 403
    assert client.get("/notifications/").status_code == 403


def test_it_refuses_an_approver_of_one_cluster_the_plans_of_another(prod, dev):
    bert = user_granted("bert", Role.APPROVER, dev)
    prod_operator = user_granted("pia", Role.OPERATOR, prod)
    cluster_apply(prod, SKEWED)
    plan = plan_request(cluster=prod, user=prod_operator, mode="full")
    with pytest.raises(PlanPermissionDenied):
        plan_approve(plan=plan, user=bert)
    plan.refresh_from_db()
    assert plan.state == PlanState.PROPOSED


def test_it_serves_an_admin_of_one_cluster_only_its_channels_and_exports(client, prod, dev):
    ada = user_granted("ada", Role.ADMIN, prod)
    NotificationChannel.objects.create(cluster=prod, name="prod-hook", url="https://x.example/p")
    NotificationChannel.objects.create(cluster=dev, name="zeta-ops-hook", url="https://x.example/d")
    plan_make(dev)
    client.force_login(ada)
    page = client.get("/notifications/").content.decode()
    assert "prod-hook" in page and "zeta-ops-hook" not in page
    exported = json.loads(b"".join(client.get("/audit/export.json").streaming_content))
    assert all(e["object_repr"].find("zeta-ops") < 0 for e in exported)
    # Changing dev's connection or policy: as if dev did not exist.
    assert client.get("/clusters/zeta-ops/edit/").status_code == 404
    assert client.get("/clusters/zeta-ops/policy/").status_code == 404
    # Adding a cluster takes admin on every cluster.
    assert client.get("/clusters/new/").status_code == 403


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_closes_the_sockets_of_a_cluster_without_a_grant(client, memory_layer, prod, dev):  # noqa: F811
    olga = user_granted("olga", Role.OPERATOR, prod)
    for path in ("/ws/clusters/zeta-ops/", "/ws/clusters/zeta-ops/plans/"):
        assert async_to_sync(close_code)(socket_for(client, olga, path)) == 4404


def test_it_keeps_the_role_groups_working_as_grants_on_every_cluster(client, prod, dev):
    """Upgrade: the global groups became grants on all clusters by migration."""
    group = Group.objects.get(name="viewer")
    assert Grant.objects.filter(group=group, cluster=None, role=Role.VIEWER).exists()
    vic = User.objects.create_user("vic")
    vic.groups.add(group)
    client.force_login(vic)
    assert client.get("/clusters/prod/").status_code == 200
    assert client.get("/clusters/zeta-ops/").status_code == 200


def test_it_ignores_permissions_ticked_on_a_user_in_the_admin(client, prod):
    """Permissions are grants only: a Django permission confers nothing."""
    from django.contrib.auth.models import Permission

    sly = User.objects.create_user("sly")
    sly.user_permissions.add(Permission.objects.get(codename="view_cluster"))
    client.force_login(sly)
    assert client.get("/clusters/prod/").status_code == 403
