"""Clusters managed in the dashboard (admin role): add, edit, Test connection, remove,
and the policy form; every change audited with secrets redacted."""

import json
import re

import pytest
from devkit.users import user_make
from django.test import Client

from apps.audit.models import AuditEvent
from apps.clusters.models import Cluster
from apps.kafka_layer.connection_check import ConnectionCheck, StepResult
from apps.plans.models import ClusterPolicy, Plan
from tests.support.factories import cluster_make, plan_make

pytestmark = pytest.mark.django_db

PASSWORD = "Dashb0ard-s3cret"
ADD = "/clusters/new/"


def all_audit_text() -> str:
    return json.dumps(list(AuditEvent.objects.values()), default=str)


@pytest.fixture
def form() -> dict:
    return {
        "name": "prod",
        "bootstrap_servers": "b1.example.com:9092, b2.example.com:9092",
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_username": "balancer",
        "sasl_password": PASSWORD,
        "ssl_verify_hostname": "on",
        # No Kafka at these addresses: stored untried.
        "action": "save-anyway",
    }


@pytest.fixture
def added(client, admin_member, form) -> Cluster:
    client.force_login(admin_member)
    response = client.post(ADD, form)
    assert response.status_code == 302, response.content.decode()[-3000:]
    return Cluster.objects.get(name="prod")


def test_it_lets_only_the_admin_role_manage_clusters(client, viewer, operator, admin_member):
    cluster = Cluster.objects.create(name="prod", bootstrap_servers="b1:9092")
    urls = [ADD, "/clusters/prod/edit/", "/clusters/prod/remove/", "/clusters/prod/policy/"]
    for user in (viewer, operator):
        client.force_login(user)
        assert [client.get(u).status_code for u in urls] == [403] * 4
        assert 'id="add-cluster"' not in client.get("/").content.decode()
        assert client.post("/clusters/prod/remove/", {"confirm": "prod"}).status_code == 403
    client.force_login(admin_member)
    assert [client.get(u).status_code for u in urls] == [200] * 4
    page = client.get("/clusters/prod/").content.decode()
    for link in ("/clusters/prod/policy/", "/clusters/prod/edit/", "/clusters/prod/remove/"):
        assert link in page
    assert Cluster.objects.filter(pk=cluster.pk).exists()


def test_it_adds_a_cluster_and_audits_who_and_what_without_secrets(added, admin_member):
    assert added.bootstrap_servers == "b1.example.com:9092,b2.example.com:9092"
    assert added.sasl_password == PASSWORD
    event = AuditEvent.objects.get(action="cluster.created")
    assert event.actor == admin_member.username and event.object_id == str(added.pk)
    assert event.after["sasl_password"] == "********"
    assert event.after["bootstrap_servers"] == added.bootstrap_servers
    assert PASSWORD not in all_audit_text()


def test_it_refuses_a_malformed_bootstrap_list_and_stores_nothing(client, admin_member, form):
    client.force_login(admin_member)
    form["bootstrap_servers"] = "this is not a bootstrap list"
    for action in ("save", "test", "save-anyway"):
        response = client.post(ADD, {**form, "action": action})
        body = response.content.decode()
        assert response.status_code == 200
        assert "&quot;this is not a bootstrap list&quot; is not host:port" in body
        assert 'id="connection-check"' not in body
    assert (
        not Cluster.objects.exists()
        and not AuditEvent.objects.filter(action__startswith="cluster.").exists()
    )
    assert PASSWORD not in body  # a refused form does not echo the password either


def test_it_names_the_failed_step_and_stores_nothing_on_test(client, admin_member, form):
    client.force_login(admin_member)
    form.update(bootstrap_servers="127.0.0.1:1", action="test")
    body = client.post(ADD, form).content.decode()
    assert "Connection failed at step: TCP — 127.0.0.1:1: Connection refused" in body
    assert 'data-step="DNS" data-ok="true"' in body
    assert 'data-step="SASL authentication" data-ok="none"' in body
    assert (
        not Cluster.objects.exists()
        and not AuditEvent.objects.filter(action__startswith="cluster.").exists()
    )


def test_save_tries_the_connection_first_and_stores_nothing_when_it_fails(
    client, admin_member, form
):
    client.force_login(admin_member)
    form.update(bootstrap_servers="127.0.0.1:1", action="save")
    body = client.post(ADD, form).content.decode()
    assert "Connection failed at step: TCP" in body and 'id="not-saved"' in body
    assert 'id="save-anyway"' in body
    assert not Cluster.objects.exists()
    assert not AuditEvent.objects.filter(action__startswith="cluster.").exists()


def test_editing_never_shows_the_secret_and_a_blank_one_keeps_it(client, added, form):
    page = client.get("/clusters/prod/edit/").content.decode()
    assert PASSWORD not in page and "gAAAAA" not in page
    assert "One is stored (encrypted); leave empty to keep it." in page

    form.update(sasl_password="", bootstrap_servers="b3.example.com:9092")
    response = client.post("/clusters/prod/edit/", form)

    assert response.status_code == 302
    added.refresh_from_db()
    assert added.sasl_password == PASSWORD
    event = AuditEvent.objects.get(action="cluster.changed")
    assert event.before == {"bootstrap_servers": "b1.example.com:9092,b2.example.com:9092"}
    assert event.after == {"bootstrap_servers": "b3.example.com:9092"}


def test_a_replaced_password_is_audited_redacted_on_both_sides(client, added, form):
    form.update(sasl_password="an0ther-Secret")
    assert client.post("/clusters/prod/edit/", form).status_code == 302
    event = AuditEvent.objects.get(action="cluster.changed")
    assert event.before == {"sasl_password": "********"}
    assert event.after == {"sasl_password": "********"}
    assert "an0ther-Secret" not in all_audit_text()


def test_it_removes_only_after_confirmation_and_keeps_the_trail(client, added):
    page = client.get("/clusters/prod/remove/").content.decode()
    assert "Type the cluster" in page and Cluster.objects.filter(pk=added.pk).exists()

    body = client.post("/clusters/prod/remove/", {"confirm": "pro"}).content.decode()
    assert "does not match; nothing was removed" in body
    assert Cluster.objects.filter(pk=added.pk).exists()

    response = client.post("/clusters/prod/remove/", {"confirm": "prod"})
    assert response.status_code == 302
    assert not Cluster.objects.filter(pk=added.pk).exists()
    actions = set(
        AuditEvent.objects.filter(
            object_type="clusters.cluster", object_id=str(added.pk)
        ).values_list("action", flat=True)
    )
    assert actions == {"cluster.created", "cluster.deleted"}
    assert PASSWORD not in all_audit_text()


def test_the_policy_is_a_form_and_changes_are_audited(client, added):
    page = client.get("/clusters/prod/policy/").content.decode()
    assert 'type="checkbox" name="goals"' in page and 'name="excluded_brokers"' in page
    assert "[]" not in page  # no raw JSON

    response = client.post(
        "/clusters/prod/policy/",
        {
            "detection_enabled": "on",
            "detection_interval": "120",
            "dead_broker_grace": "60",
            "goals": ["replica-distribution"],
            "balance_threshold": "1.2",
            "balance_target": "1.1",
            "goal_thresholds": "leader-distribution = 1.3",
            "topics_include": "orders-*\npayments",
            "topics_exclude": "",
            "excluded_brokers": "4, 7",
            "throttle_bytes_per_sec": "1000000",
            "max_moves_per_broker": "5",
            "max_moves_cluster": "20",
        },
    )

    assert response.status_code == 302, response.content.decode()[-2000:]
    policy = ClusterPolicy.objects.get(cluster=added)
    assert policy.goals == ["replica-distribution"]
    assert policy.goal_thresholds == {"leader-distribution": 1.3}
    assert policy.topics_include == ["orders-*", "payments"]
    assert policy.excluded_brokers == [4, 7]
    event = AuditEvent.objects.get(action="policy.changed")
    assert event.after["excluded_brokers"] == [4, 7] and event.before["excluded_brokers"] == []


def test_a_bad_policy_value_is_refused_with_a_message(client, added):
    client.get("/clusters/prod/policy/")
    body = client.post(
        "/clusters/prod/policy/",
        {
            "detection_interval": "120",
            "dead_broker_grace": "60",
            "balance_threshold": "0.5",
            "excluded_brokers": "four",
            "throttle_bytes_per_sec": "0",
            "max_moves_per_broker": "5",
            "max_moves_cluster": "20",
        },
    ).content.decode()
    assert "Broker ids are whole numbers" in body
    assert not AuditEvent.objects.filter(action="policy.changed").exists()


def test_it_refuses_to_remove_a_cluster_while_a_plan_moves_data_on_it(client, admin_member):
    cluster = cluster_make("busy")
    plan = plan_make(cluster)
    Plan.objects.filter(pk=plan.pk).update(state="executing")
    client.force_login(admin_member)

    body = client.post("/clusters/busy/remove/", {"confirm": "busy"}).content.decode()

    assert f"Not removed: plan {plan.pk} is executing on busy" in body
    assert Cluster.objects.filter(pk=cluster.pk).exists()
    assert not AuditEvent.objects.filter(action="cluster.deleted").exists()

    # The Django admin asks the same service, and says why.
    admin_member.is_staff = True
    admin_member.save()
    response = client.post(f"/admin/clusters/cluster/{cluster.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302 and response.url.endswith(f"/{cluster.pk}/change/")
    assert Cluster.objects.filter(pk=cluster.pk).exists()


def test_saving_the_policy_form_keeps_the_stored_goal_priority(client, added):
    ClusterPolicy.objects.create(
        cluster=added, goals=["leader-distribution", "replica-distribution"]
    )
    page = client.get("/clusters/prod/policy/")
    form = page.context["form"]
    data = {
        name: value
        for name, value in form.initial.items()
        if name not in {"detection_enabled", "four_eyes", "auto_approve_self_healing"}
        and value is not None
    }
    data["goals"] = ["replica-distribution", "leader-distribution"]  # the page's order
    data["balance_threshold"] = "1.5"
    assert client.post("/clusters/prod/policy/", data).status_code == 302
    policy = ClusterPolicy.objects.get(cluster=added)
    assert policy.goals == ["leader-distribution", "replica-distribution"]
    assert policy.balance_threshold == 1.5


def test_the_name_of_the_add_page_is_reserved(client, admin_member, form):
    client.force_login(admin_member)
    body = client.post(ADD, {**form, "name": "new"}).content.decode()
    assert "&quot;new&quot; is reserved; choose another name." in body
    assert not Cluster.objects.exists()


@pytest.fixture
def checked(monkeypatch) -> list[str]:
    """Test connection and Save's check pass; the passwords they were tried with."""
    passwords: list[str] = []

    def check(*, connection):
        passwords.append(connection.sasl_password)
        return ConnectionCheck(steps=[StepResult(step="TCP", ok=True)])

    monkeypatch.setattr("apps.dashboard.views_clusters.connection_check", check)
    return passwords


def entered_reference(body: str) -> str:
    match = re.search(r'name="entered_secrets" value="([^"]+)"', body)
    assert match, "the page carries no reference to the entered secrets"
    return match.group(1)


def test_a_password_tested_then_saved_with_the_field_blank_is_stored(
    client, admin_member, form, checked
):
    client.force_login(admin_member)
    form.update(security_protocol="SASL_SSL", action="test")
    tested = client.post(ADD, form).content.decode()
    assert 'data-ok="true"' in tested and not Cluster.objects.exists()
    # The page holds neither the password nor anything encrypted, only a reference.
    assert PASSWORD not in tested and "gAAAAA" not in tested
    assert "The one entered before is kept for Save" in tested

    # What a browser sends back: the password field blank (it was never rendered).
    save = {**form, "sasl_password": "", "action": "save"}
    response = client.post(ADD, {**save, "entered_secrets": entered_reference(tested)})

    assert response.status_code == 302, response.content.decode()[-2000:]
    assert Cluster.objects.get(name="prod").sasl_password == PASSWORD
    assert checked == [PASSWORD, PASSWORD]
    assert AuditEvent.objects.get(action="cluster.created").after["sasl_password"] == "********"
    assert PASSWORD not in all_audit_text()
    # Saved: the reference is spent, and the session holds no copy in clear.
    assert PASSWORD not in json.dumps(dict(client.session.items()))
    assert not client.session.get("cluster_form_entered_secrets")


def test_without_the_reference_a_blank_password_is_refused_and_nothing_stored(
    client, admin_member, form, checked
):
    client.force_login(admin_member)
    form.update(security_protocol="SASL_SSL", action="test")
    client.post(ADD, form)
    body = client.post(ADD, {**form, "sasl_password": "", "action": "save"}).content.decode()
    assert "needs a password" in body and not Cluster.objects.exists()
    # Another user's session cannot use a reference from this one.
    reference = entered_reference(client.post(ADD, form).content.decode())
    other = Client()
    other.force_login(user_make("eve", "admin"))
    other.post(ADD, {**form, "sasl_password": "", "action": "save", "entered_secrets": reference})
    assert not Cluster.objects.exists()


def test_forget_drops_a_password_entered_before(client, added, form, checked):
    form.update(sasl_password="n3w-Secret", action="test")
    reference = entered_reference(client.post("/clusters/prod/edit/", form).content.decode())
    save = {**form, "sasl_password": "", "action": "save", "entered_secrets": reference}
    save["forget_sasl_password"] = "on"
    save.update(security_protocol="PLAINTEXT", sasl_mechanism="", sasl_username="")
    assert client.post("/clusters/prod/edit/", save).status_code == 302
    added.refresh_from_db()
    assert added.sasl_password == "" and checked == ["n3w-Secret", ""]
