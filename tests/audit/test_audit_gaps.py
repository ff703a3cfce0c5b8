"""What the trail used to miss: users and groups changed in the admin, a refused plan
request; and audit rows about a plan link to its page."""

import pytest
from devkit.users import user_make
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from apps.audit.models import AuditEvent
from tests.support.factories import cluster_make, plan_make

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, admin_user):
    client.force_login(admin_user)
    return client


def test_it_audits_users_created_changed_and_deleted_in_the_admin(admin_client, admin_user):
    response = admin_client.post(
        "/admin/auth/user/add/",
        {
            "username": "newbie",
            "password1": "a-long-pass-1",
            "password2": "a-long-pass-1",
            "usable_password": "true",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    user = User.objects.get(username="newbie")
    created = AuditEvent.objects.get(action="user.created")
    assert created.actor == admin_user.username and created.object_id == str(user.pk)
    assert created.after["groups"] == [] and created.after["is_staff"] is False

    operator = Group.objects.get(name="operator")
    response = admin_client.post(
        f"/admin/auth/user/{user.pk}/change/",
        {
            "username": "newbie",
            "is_active": "on",
            "is_staff": "on",
            "groups": [operator.pk],
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    changed = AuditEvent.objects.get(action="user.changed")
    assert changed.before["groups"] == [] and changed.after["groups"] == ["operator"]
    assert changed.before["is_staff"] is False and changed.after["is_staff"] is True

    response = admin_client.post(
        f"/admin/auth/user/{user.pk}/password/",
        {"password1": "another-pass-2", "password2": "another-pass-2"},
    )
    assert response.status_code == 302
    assert AuditEvent.objects.filter(action="user.password_changed").count() == 1

    response = admin_client.post(f"/admin/auth/user/{user.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    deleted = AuditEvent.objects.get(action="user.deleted")
    assert deleted.object_repr == "newbie" and deleted.before["groups"] == ["operator"]
    # No password, nor its hash, anywhere in the trail.
    rows = str(list(AuditEvent.objects.values_list("before", "after", "reason")))
    assert "pass" not in rows and "pbkdf2" not in rows


def test_it_audits_a_groups_permissions_changed_in_the_admin(admin_client):
    viewer = Group.objects.get(name="viewer")
    kept = list(viewer.permissions.values_list("pk", flat=True))[1:]
    response = admin_client.post(
        f"/admin/auth/group/{viewer.pk}/change/", {"name": "viewer", "permissions": kept}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    event = AuditEvent.objects.get(action="group.changed")
    assert len(event.before["permissions"]) == len(event.after["permissions"]) + 1


def test_it_audits_a_refused_plan_request():
    cluster = cluster_make()
    api = APIClient()
    api.force_login(user_make("vic", "viewer"))
    response = api.post(
        "/api/clusters/prod/plans/", {"mode": "full", "reason": "forged"}, format="json"
    )
    assert response.status_code == 403
    event = AuditEvent.objects.get(action="plan.request_refused")
    assert event.actor == "vic" and event.object_id == str(cluster.pk)
    assert event.after == {"mode": "full", "brokers": []} and "not allowed" in event.reason


def test_audit_rows_about_a_plan_link_to_it(client, viewer):
    cluster = cluster_make()
    plan = plan_make(cluster)
    client.force_login(viewer)
    body = client.get("/audit/?action=plan.proposed").content.decode()
    assert f'class="plan-link" href="/clusters/prod/plans/{plan.pk}/"' in body
