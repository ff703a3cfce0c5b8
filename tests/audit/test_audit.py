"""The audit trail: append-only, sign-ins recorded, filter and export."""

import csv
import io
import json
from datetime import timedelta

import pytest
from django.contrib.admin.sites import site as admin_site
from django.contrib.auth.models import Group
from django.test import RequestFactory
from django.utils import timezone

from apps.audit.models import AuditEvent, AuditEventImmutable
from apps.audit.selectors import audit_events_filter
from apps.audit.services import actor_policy, actor_system, audit_record
from apps.audit.signin import signin_failures_audit

pytestmark = pytest.mark.django_db


@pytest.fixture
def viewer(django_user_model):
    user = django_user_model.objects.create_user("vera", password="pw-vera-123")
    user.groups.add(Group.objects.get(name="viewer"))  # a viewer on every cluster
    return user


def test_it_records_who_did_what_to_which_object(admin_user):
    event = audit_record(
        actor=admin_user,
        action="plan.approved",
        obj=admin_user,
        before={"state": "proposed", "at": timezone.now()},
        after={"state": "approved"},
        reason="looks fine",
        client_address="10.1.2.3",
    )
    event.refresh_from_db()
    assert (event.actor_kind, event.actor, event.actor_user_id) == ("user", "admin", admin_user.pk)
    assert event.object_type == "auth.user" and event.object_id == str(admin_user.pk)
    assert event.before["state"] == "proposed" and isinstance(event.before["at"], str)
    assert event.after == {"state": "approved"}
    assert event.reason == "looks fine" and event.client_address == "10.1.2.3"


def test_it_records_policy_and_system_actors():
    audit_record(actor=actor_policy(cluster_name="demo"), action="plan.approved")
    audit_record(actor=actor_system(name="executor"), action="execution.batch")
    audit_record(actor=None, action="auth.login_failed")
    rows = list(AuditEvent.objects.order_by("id").values_list("actor_kind", "actor"))
    assert rows == [("policy", "policy:demo"), ("system", "executor"), ("anonymous", "anonymous")]


def test_it_refuses_an_event_without_action():
    with pytest.raises(ValueError):
        audit_record(actor=None, action="")
    assert AuditEvent.objects.count() == 0


def test_it_refuses_every_way_to_change_or_delete_an_event(admin_user):
    event = audit_record(actor=admin_user, action="plan.approved", reason="ok")

    event.reason = "rewritten"
    with pytest.raises(AuditEventImmutable):
        event.save()
    with pytest.raises(AuditEventImmutable):
        event.delete()
    with pytest.raises(AuditEventImmutable):
        AuditEvent.objects.filter(pk=event.pk).update(reason="rewritten")
    with pytest.raises(AuditEventImmutable):
        AuditEvent.objects.all().delete()
    with pytest.raises(AuditEventImmutable):
        AuditEvent.objects.bulk_update([event], ["reason"])

    event.refresh_from_db()
    assert event.reason == "ok" and AuditEvent.objects.count() == 1


def test_it_keeps_the_event_when_the_user_is_deleted(django_user_model):
    user = django_user_model.objects.create_user("gone")
    audit_record(actor=user, action="plan.requested")
    user.delete()
    assert AuditEvent.objects.get(action="plan.requested").actor == "gone"


def test_it_gives_the_admin_no_way_to_add_change_or_delete(admin_user):
    model_admin = admin_site._registry[AuditEvent]
    request = RequestFactory().get("/admin/audit/auditevent/")
    request.user = admin_user
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request)
    assert not model_admin.has_delete_permission(request)
    assert model_admin.has_view_permission(request)


def test_it_refuses_admin_post_to_change_an_event(client, admin_user):
    event = audit_record(actor=admin_user, action="plan.approved", reason="ok")
    client.force_login(admin_user)
    response = client.post(f"/admin/audit/auditevent/{event.pk}/change/", {"reason": "rewritten"})
    assert response.status_code == 403
    response = client.post(f"/admin/audit/auditevent/{event.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    event.refresh_from_db()
    assert event.reason == "ok"


def test_it_records_sign_in_and_failed_sign_in(client, django_user_model, settings):
    django_user_model.objects.create_user("olga", password="pw-olga-123")

    client.post(
        "/accounts/login/", {"username": "olga", "password": "wrong"}, REMOTE_ADDR="10.0.0.7"
    )
    client.post(
        "/accounts/login/", {"username": "olga", "password": "pw-olga-123"}, REMOTE_ADDR="10.0.0.8"
    )

    # Failures are counted, then summarised when their window closes.
    assert not AuditEvent.objects.filter(action="auth.login_failed").exists()
    signin_failures_audit(at=timezone.now() + timedelta(minutes=settings.SIGNIN_WINDOW_MINUTES))
    failed = AuditEvent.objects.get(action="auth.login_failed")
    assert failed.actor_kind == "anonymous" and failed.object_repr == "olga"
    assert failed.after["username"] == "olga" and failed.after["failures"] == 1
    assert failed.client_address == "10.0.0.7"
    assert "wrong" not in json.dumps(failed.after)
    login = AuditEvent.objects.get(action="auth.login")
    assert login.actor == "olga" and login.client_address == "10.0.0.8"


def test_it_filters_by_actor_action_prefix_object_and_time(admin_user, django_user_model):
    other = django_user_model.objects.create_user("bob")
    audit_record(actor=admin_user, action="plan.approved", object_type="plans.plan", object_id="1")
    audit_record(actor=other, action="plan.rejected", object_type="plans.plan", object_id="2")
    audit_record(actor=other, action="policy.changed", object_type="plans.clusterpolicy")

    assert audit_events_filter(actor="bob").count() == 2
    assert audit_events_filter(action="plan.").count() == 2
    assert audit_events_filter(object_type="plans.plan", object_id="2").get().actor == "bob"
    assert audit_events_filter(since=timezone.now() + timedelta(seconds=5)).count() == 0
    assert audit_events_filter(until=timezone.now() + timedelta(seconds=5)).count() == 3


def test_it_lists_events_for_users_with_the_view_permission_only(client, viewer, django_user_model):
    audit_record(actor=viewer, action="plan.approved", reason="visible-reason")

    nobody = django_user_model.objects.create_user("nobody")
    client.force_login(nobody)
    assert client.get("/audit/").status_code == 403

    client.force_login(viewer)
    body = client.get("/audit/?action=plan.").content.decode()
    assert "visible-reason" in body


def test_it_requires_login_for_the_list_and_export(client):
    for url in ("/audit/", "/audit/export.csv", "/audit/export.json"):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_it_exports_filtered_events_as_csv_and_json(client, admin_user):
    audit_record(actor=admin_user, action="plan.approved", reason="=cmd()", after={"n": 1})
    audit_record(actor=admin_user, action="policy.changed")
    client.force_login(admin_user)

    response = client.get("/audit/export.csv?action=plan.")
    assert response["Content-Type"] == "text/csv"
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert len(rows) == 1 and rows[0]["action"] == "plan.approved"
    assert rows[0]["reason"] == "'=cmd()"  # no spreadsheet formula
    assert json.loads(rows[0]["after"]) == {"n": 1}

    response = client.get("/audit/export.json")
    events = json.loads(b"".join(response.streaming_content))
    # force_login itself is a sign-in event, newest first.
    assert [e["action"] for e in events] == ["auth.login", "policy.changed", "plan.approved"]


def test_it_rejects_a_malformed_filter_and_refuses_export_without_permission(client, viewer):
    client.force_login(viewer)
    response = client.get("/audit/?since=not-a-date")
    assert response.status_code == 400 and b"since" in response.content
    assert client.get("/audit/export.csv").status_code == 403


def test_it_refuses_writes_through_the_views(client, admin_user):
    client.force_login(admin_user)
    event = audit_record(actor=admin_user, action="plan.approved")
    before = list(AuditEvent.objects.values_list("id", "reason"))
    assert client.post("/audit/", {"action": "x"}).status_code == 405
    assert client.delete("/audit/export.json").status_code == 405
    assert list(AuditEvent.objects.values_list("id", "reason")) == before
    assert AuditEvent.objects.filter(pk=event.pk).exists()
