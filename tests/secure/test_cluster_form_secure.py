"""The dashboard's cluster form against the secured dev cluster: Test connection passes
over SASL_SSL/SCRAM and over mTLS, and a wrong password, an unknown CA and a missing
ACL each fail at their own step with the client's message, storing nothing."""

import datetime
import re

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from dev_cluster.secure import NO_ALTER_USER, SecureDevCluster

from apps.audit.models import AuditEvent
from apps.clusters.models import Cluster

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

ADD = "/clusters/new/"


def other_ca_pem() -> str:
    """A self-signed CA that signed nothing of the dev cluster's."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "some other CA")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def form(secure_cluster: SecureDevCluster, *, listener: str, action: str, **changes) -> dict:
    values = {
        "name": "secured",
        **secure_cluster.client_settings(listener=listener),
        "ssl_verify_hostname": "on",
        "action": action,
    }
    values.update(changes)
    if listener == "SASL_SSL":
        values.setdefault("sasl_mechanism", "SCRAM-SHA-512")
    return values


def nothing_stored() -> bool:
    return (
        not Cluster.objects.exists()
        and not AuditEvent.objects.filter(action__startswith="cluster.").exists()
    )


@pytest.mark.parametrize("listener", ["SASL_SSL", "MTLS"])
def test_it_adds_the_secured_cluster_after_the_connection_test_passes(
    client, admin_member, secure_cluster, listener
):
    client.force_login(admin_member)
    body = client.post(ADD, form(secure_cluster, listener=listener, action="test")).content
    body = body.decode()
    assert "Connection works." in body, body[-3000:]
    assert nothing_stored()  # a test stores nothing

    # Save as a browser sends it after the test: the secret fields blank (never sent back
    # to the page), the reference to what was typed, which Save tries again and stores.
    reference = re.search(r'name="entered_secrets" value="([^"]+)"', body).group(1)
    blank = {"sasl_password": ""} if listener == "SASL_SSL" else {"ssl_key_pem": ""}
    save = form(secure_cluster, listener=listener, action="save", **blank)
    response = client.post(ADD, {**save, "entered_secrets": reference})
    assert response.status_code == 302, response.content.decode()[-3000:]
    cluster = Cluster.objects.get(name="secured")
    assert cluster.security_protocol == ("SASL_SSL" if listener == "SASL_SSL" else "SSL")
    page = client.get("/clusters/secured/edit/").content.decode()
    secret = cluster.sasl_password if listener == "SASL_SSL" else cluster.ssl_key_pem
    assert secret and secret not in page  # write-only


def test_a_wrong_password_fails_at_sasl_authentication_and_stores_nothing(
    client, admin_member, secure_cluster
):
    client.force_login(admin_member)
    wrong = "not-the-Passw0rd"
    for action in ("test", "save"):
        values = form(secure_cluster, listener="SASL_SSL", action=action, sasl_password=wrong)
        body = client.post(ADD, values).content.decode()
        assert "Connection failed at step: SASL authentication" in body, body[-3000:]
        assert "Authentication failed" in body  # Kafka's own words
        assert 'data-step="TLS handshake" data-ok="true"' in body
        assert wrong not in body
    assert nothing_stored()


def test_an_unknown_ca_fails_at_the_tls_handshake_and_stores_nothing(
    client, admin_member, secure_cluster
):
    client.force_login(admin_member)
    for listener in ("SASL_SSL", "MTLS"):
        values = form(secure_cluster, listener=listener, action="save", ssl_ca_pem=other_ca_pem())
        body = client.post(ADD, values).content.decode()
        assert "Connection failed at step: TLS handshake" in body, body[-3000:]
        assert "certificate verify failed" in body
    assert nothing_stored()


def test_a_missing_acl_fails_at_authorization_naming_it_and_stores_nothing(
    client, admin_member, secure_cluster
):
    client.force_login(admin_member)
    settings = secure_cluster.client_settings(listener="SASL_SSL", principal=NO_ALTER_USER)
    values = form(secure_cluster, listener="SASL_SSL", action="save", **settings)
    body = client.post(ADD, values).content.decode()
    assert "Connection failed at step: authorization" in body, body[-3000:]
    assert "the principal lacks on the cluster resource: Alter" in body
    assert 'data-step="SASL authentication" data-ok="true"' in body
    assert nothing_stored()
