"""The admin edits connection settings; secrets are write-only and audited redacted."""

import json

import pytest

from apps.audit.models import AuditEvent
from apps.clusters.models import Cluster

pytestmark = pytest.mark.django_db

PASSWORD = "Adm1n-only-s3cret"
ADD = "/admin/clusters/cluster/add/"


def change_url(cluster: Cluster) -> str:
    return f"/admin/clusters/cluster/{cluster.pk}/change/"


@pytest.fixture
def form(pki, client_cert) -> dict:
    return {
        "name": "prod",
        "bootstrap_servers": "b1.example.com:9093, b2.example.com:9093",
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_username": "balancer",
        "sasl_password": PASSWORD,
        "ssl_ca_pem": pki.ca_pem,
        "ssl_certificate_pem": client_cert.certificate_pem,
        "ssl_key_pem": client_cert.key_pem,
        "ssl_verify_hostname": "on",
    }


@pytest.fixture
def added(client, admin_user, form) -> Cluster:
    client.force_login(admin_user)
    response = client.post(ADD, form)
    assert response.status_code == 302, response.content.decode()[:3000]
    return Cluster.objects.get(name="prod")


def all_audit_text() -> str:
    return json.dumps(list(AuditEvent.objects.values()), default=str)


def test_it_adds_a_secured_cluster_and_audits_it_without_secrets(added, client_cert):
    assert added.bootstrap_servers == "b1.example.com:9093,b2.example.com:9093"
    assert added.sasl_password == PASSWORD and added.ssl_key_pem == client_cert.key_pem.strip()
    event = AuditEvent.objects.get(action="cluster.created")
    assert event.after["sasl_password"] == event.after["ssl_key_pem"] == "********"
    assert event.after["sasl_username"] == "balancer"
    text = all_audit_text()
    assert PASSWORD not in text and "PRIVATE KEY" not in text


def test_the_change_page_never_shows_a_stored_secret(client, added, client_cert):
    page = client.get(change_url(added)).content.decode()
    assert PASSWORD not in page and "gAAAAA" not in page  # neither text nor ciphertext
    assert client_cert.key_pem.splitlines()[1] not in page
    assert "One is stored (encrypted); leave empty to keep it." in page
    assert "balancer" in page  # the username is not a secret


def test_a_blank_secret_keeps_the_stored_one(client, added, form):
    form.update(sasl_password="", ssl_key_pem="", bootstrap_servers="b3.example.com:9093")
    response = client.post(change_url(added), form)
    assert response.status_code == 302, response.context["adminform"].form.errors
    added.refresh_from_db()
    assert added.sasl_password == PASSWORD and added.ssl_key_pem
    event = AuditEvent.objects.get(action="cluster.changed")
    assert event.before == {"bootstrap_servers": "b1.example.com:9093,b2.example.com:9093"}
    assert event.after == {"bootstrap_servers": "b3.example.com:9093"}


def test_a_new_password_replaces_the_stored_one_and_is_audited_redacted(client, added, form):
    form.update(sasl_password="n3w-Password", ssl_key_pem="")
    response = client.post(change_url(added), form)
    assert response.status_code == 302, response.context["adminform"].form.errors
    added.refresh_from_db()
    assert added.sasl_password == "n3w-Password"
    event = AuditEvent.objects.get(action="cluster.changed")
    assert event.before == {"sasl_password": "********"}
    assert event.after == {"sasl_password": "********"}
    assert "n3w-Password" not in all_audit_text()


def test_switching_to_plain_tls_forgets_the_password(client, added, form):
    form.update(
        security_protocol="SSL",
        sasl_mechanism="",
        sasl_username="",
        sasl_password="",
        ssl_key_pem="",
        forget_sasl_password="on",
    )
    response = client.post(change_url(added), form)
    assert response.status_code == 302, response.context["adminform"].form.errors
    added.refresh_from_db()
    assert (added.security_protocol, added.sasl_password) == ("SSL", "")
    assert added.ssl_key_pem  # kept: mutual TLS still uses it


def test_bad_input_is_explained_and_changes_nothing(client, added, form):
    form.update(bootstrap_servers="this is not a bootstrap list", sasl_password="", ssl_key_pem="")
    form.update(security_protocol="PLAINTEXT")
    response = client.post(change_url(added), form)
    assert response.status_code == 200
    page = response.content.decode()
    assert "&quot;this is not a bootstrap list&quot; is not host:port" in page
    assert "Only used with SASL_PLAINTEXT or SASL_SSL, not PLAINTEXT" in page
    assert PASSWORD not in page
    fresh = Cluster.objects.get(pk=added.pk)
    assert fresh.security_protocol == "SASL_SSL" and fresh.sasl_password == PASSWORD
    assert not AuditEvent.objects.filter(action="cluster.changed").exists()


def test_a_superuser_deletes_a_cluster_with_its_policy_and_the_trail_stays(client, added):
    from apps.plans.services import policy_get

    policy_get(cluster=added)
    url = f"/admin/clusters/cluster/{added.pk}/delete/"
    page = client.get(url).content.decode()
    assert "no permission" not in page.lower() and "cluster policy" in page.lower()

    response = client.post(url, {"post": "yes"})

    assert response.status_code == 302
    assert not Cluster.objects.filter(pk=added.pk).exists()
    event = AuditEvent.objects.get(action="cluster.deleted")
    assert event.object_id == str(added.pk) and event.before["sasl_password"] == "********"
    assert AuditEvent.objects.filter(action="cluster.created", object_id=str(added.pk)).exists()
    assert PASSWORD not in all_audit_text()
