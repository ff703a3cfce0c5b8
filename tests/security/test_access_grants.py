"""Admins manage grants on the dashboard, each change audited; nobody else can, and a
cluster's admin grants on that cluster only (issue 24, item 1)."""

import pytest
from django.contrib.auth.models import User

from apps.access.models import Grant
from apps.access.roles import Role
from apps.audit.models import AuditEvent
from tests.support.factories import cluster_make, user_granted

pytestmark = pytest.mark.django_db


def test_it_grants_and_revokes_on_the_access_page_with_an_audit_row_each(client):
    prod = cluster_make("prod")
    ada = user_granted("ada", Role.ADMIN, prod)
    User.objects.create_user("newbie")
    client.force_login(ada)
    response = client.post(
        "/access/", {"role": "operator", "cluster": "prod", "username": "newbie"}
    )
    assert response.status_code == 302
    grant = Grant.objects.get(user__username="newbie")
    assert (grant.role, grant.cluster) == ("operator", prod)
    made = AuditEvent.objects.get(action="grant.created")
    assert made.after["cluster"] == "prod" and made.cluster_id == prod.pk and made.actor == "ada"

    client.post(f"/access/{grant.pk}/revoke/")
    assert not Grant.objects.filter(pk=grant.pk).exists()
    revoked = AuditEvent.objects.get(action="grant.revoked")
    assert revoked.before["user"] == "newbie" and revoked.cluster_id == prod.pk


def test_it_refuses_grants_outside_the_clusters_an_admin_administers(client):
    prod, other = cluster_make("prod"), cluster_make("other")
    ada = user_granted("ada", Role.ADMIN, prod)
    theirs = Grant.objects.create(
        role=Role.VIEWER, user=User.objects.create_user("x"), cluster=other
    )
    User.objects.create_user("newbie")
    client.force_login(ada)
    for where in ("other", "*"):
        client.post("/access/", {"role": "admin", "cluster": where, "username": "newbie"})
    client.post(f"/access/{theirs.pk}/revoke/")
    assert not Grant.objects.filter(user__username="newbie").exists()
    assert Grant.objects.filter(pk=theirs.pk).exists()
    assert "other" not in client.get("/access/").content.decode()


def test_it_shows_the_access_page_to_admins_only(client):
    prod = cluster_make("prod")
    client.force_login(user_granted("olga", Role.OPERATOR, prod))
    assert client.get("/access/").status_code == 403
