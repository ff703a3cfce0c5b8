"""The notifications page and its "Send test" button: admin role only, URLs by host."""

import pytest
from devkit.users import user_make

from apps.audit.services import actor_system
from apps.notifications.models import ChannelKind, Delivery, NotificationChannel
from apps.notifications.tasks import delivery_send_task
from apps.plans.services.plan_audit import plan_audit_record
from tests.notifications.conftest import SECRET, SLACK_PATH
from tests.support.factories import plan_row_make

pytestmark = pytest.mark.django_db
PAGE = "/notifications/"


def test_it_is_for_the_admin_role_only(client, slack, approver):
    assert client.get(PAGE).status_code == 302  # to the sign-in page

    client.force_login(approver)
    assert client.get(PAGE).status_code == 403
    assert client.post(f"/notifications/{slack.pk}/test/").status_code == 403
    assert "Notifications</a>" not in client.get("/audit/").content.decode()


def test_it_shows_channels_by_host_and_the_delivery_log(
    client, slack, webhook, receiver, admin_member
):
    receiver.statuses = [500]
    plan_audit_record(
        plan=plan_row_make(slack.cluster),
        actor=actor_system(name="detector"),
        action="plan.proposed",
    )
    for delivery in Delivery.objects.all():
        delivery_send_task.apply(args=[delivery.pk])
    client.force_login(admin_member)

    body = client.get(PAGE).content.decode()

    assert "Notifications</a>" in body
    assert body.count("<code>127.0.0.1</code>") == 2
    assert SLACK_PATH not in body and "XXXXtokenXXXX" not in body and SECRET not in body
    assert body.count('data-state="delivered"') == 2
    assert "will retry · HTTP 500" in body


def test_the_button_sends_a_test_and_says_how_it_went(client, slack, receiver, admin_member):
    client.force_login(admin_member)

    response = client.post(f"/notifications/{slack.pk}/test/", follow=True)

    assert response.redirect_chain == [(PAGE, 302)]
    assert "prod/slack: test delivered (HTTP 200)." in response.content.decode()
    assert receiver.requests[0].headers["X-Balancer-Event"] == "test"


def test_the_button_reports_a_failure_without_the_url(
    client, empty_cluster, closed_port, admin_member
):
    down = NotificationChannel.objects.create(
        cluster=empty_cluster,
        name="down",
        kind=ChannelKind.SLACK,
        url=f"http://127.0.0.1:{closed_port}{SLACK_PATH}",
    )
    client.force_login(admin_member)

    body = client.post(f"/notifications/{down.pk}/test/", follow=True).content.decode()

    assert "prod/down: test not delivered: ConnectionError" in body
    assert "XXXXtokenXXXX" not in body


def test_the_button_takes_only_a_post_for_a_known_channel(client, slack, admin_member):
    client.force_login(admin_member)

    assert client.get(f"/notifications/{slack.pk}/test/").status_code == 405
    assert client.post("/notifications/999999/test/").status_code == 404


def test_a_superuser_sees_it_too(client, slack):
    root = user_make("root")
    root.is_superuser = True
    root.save()
    client.force_login(root)

    assert client.get(PAGE).status_code == 200
