"""Connection settings are checked with messages that say what to fix."""

from dataclasses import replace

import pytest
from django.core.exceptions import ValidationError

from apps.clusters.models import Cluster
from apps.clusters.validators import bootstrap_servers_errors, connection_errors
from apps.kafka_layer.connection import ConnectionSettings
from tests.clusters.pki import Pki, encrypted_pem, pkcs1_pem

OK = ConnectionSettings(bootstrap_servers="k1:9092")


@pytest.mark.parametrize(
    "value",
    [
        "k1:9092",
        "broker-1.example.com:9093,broker-2.example.com:9093",
        "10.0.0.1:9092, 10.0.0.2:9092",
        "[2001:db8::1]:9092",
        "kafka_broker_1:29092",
    ],
)
def test_it_accepts_host_port_lists(value):
    assert bootstrap_servers_errors(value) == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("this is not a bootstrap list", '"this is not a bootstrap list" is not host:port'),
        ("k1", '"k1" is not host:port'),
        ("k1:9092,", "An empty entry between commas"),
        ("k1:99999", "the port must be between 1 and 65535"),
        ("k1:0", "the port must be between 1 and 65535"),
        ("http://k1:9092", '"http://k1:9092" is not host:port'),
        ("", "Give at least one host:port"),
    ],
)
def test_it_names_what_is_wrong_in_a_bootstrap_list(value, message):
    errors = bootstrap_servers_errors(value)
    assert len(errors) == 1 and message in errors[0], errors


def test_it_accepts_each_complete_protocol(pki, client_cert):
    sasl = replace(OK, sasl_mechanism="SCRAM-SHA-512", sasl_username="u", sasl_password="p")
    for conn in (
        OK,
        replace(sasl, security_protocol="SASL_PLAINTEXT"),
        replace(sasl, security_protocol="SASL_SSL"),
        replace(sasl, security_protocol="SASL_SSL", ssl_ca_pem=pki.ca_pem),
        replace(
            OK,
            security_protocol="SSL",
            ssl_ca_pem=pki.ca_pem,
            ssl_certificate_pem=client_cert.certificate_pem,
            ssl_key_pem=pkcs1_pem(client_cert.key),
        ),
    ):
        assert connection_errors(conn) == {}, conn.security_protocol


def test_it_requires_a_mechanism_username_and_password_for_sasl():
    errors = connection_errors(replace(OK, security_protocol="SASL_SSL"))
    assert set(errors) == {"sasl_mechanism", "sasl_username", "sasl_password"}
    assert "SCRAM-SHA-512" in errors["sasl_mechanism"][0]
    assert errors["sasl_password"] == ["SASL_SSL needs a password."]


def test_it_refuses_line_breaks_in_credentials():
    conn = replace(
        OK,
        security_protocol="SASL_SSL",
        sasl_mechanism="PLAIN",
        sasl_username="u",
        sasl_password="p\n",
    )
    assert list(connection_errors(conn)) == ["sasl_password"]


def test_it_refuses_settings_the_protocol_would_ignore(pki):
    errors = connection_errors(
        replace(OK, sasl_username="u", sasl_password="p", ssl_ca_pem=pki.ca_pem)
    )
    assert set(errors) == {"sasl_username", "sasl_password", "ssl_ca_pem"}
    assert "Only used with SSL or SASL_SSL, not PLAINTEXT" in errors["ssl_ca_pem"][0]


def test_it_refuses_an_unknown_protocol():
    assert list(connection_errors(replace(OK, security_protocol="TLS"))) == ["security_protocol"]


def test_it_needs_both_halves_of_a_client_pair(pki, client_cert):
    tls = replace(OK, security_protocol="SSL")
    no_key = replace(tls, ssl_certificate_pem=client_cert.certificate_pem)
    no_cert = replace(tls, ssl_key_pem=client_cert.key_pem)
    assert list(connection_errors(no_key)) == ["ssl_key_pem"]
    assert list(connection_errors(no_cert)) == ["ssl_certificate_pem"]
    assert (
        "both the client certificate and its private key"
        in connection_errors(no_key)["ssl_key_pem"][0]
    )


def test_it_says_which_pem_does_not_parse(pki, client_cert):
    tls = replace(OK, security_protocol="SSL")
    errors = connection_errors(
        replace(
            tls,
            ssl_ca_pem="not a certificate",
            ssl_certificate_pem="-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----",
            ssl_key_pem="not a key",
        )
    )
    assert errors["ssl_ca_pem"][0].startswith("Not a CA certificate: no PEM certificate")
    assert errors["ssl_certificate_pem"][0].startswith("Not a client certificate: a certificate")
    assert errors["ssl_key_pem"][0].startswith("Not a usable private key: it is not a PEM")


def test_it_asks_for_the_key_unencrypted(client_cert):
    conn = replace(
        OK,
        security_protocol="SSL",
        ssl_certificate_pem=client_cert.certificate_pem,
        ssl_key_pem=encrypted_pem(client_cert.key),
    )
    assert "the key is encrypted; give it unencrypted" in connection_errors(conn)["ssl_key_pem"][0]


def test_it_notices_a_key_that_belongs_to_another_certificate(pki, client_cert):
    conn = replace(
        OK,
        security_protocol="SSL",
        ssl_certificate_pem=client_cert.certificate_pem,
        ssl_key_pem=pki.issue("someone-else").key_pem,
    )
    assert "does not belong to the client certificate" in connection_errors(conn)["ssl_key_pem"][0]


@pytest.mark.django_db
def test_the_model_cleans_to_field_errors_and_normalizes_the_list():
    cluster = Cluster(name="prod", bootstrap_servers="k1:9092 , k2:9092")
    cluster.full_clean()
    assert cluster.bootstrap_servers == "k1:9092,k2:9092"

    cluster = Cluster(name="prod", bootstrap_servers="nope", security_protocol="SASL_SSL")
    with pytest.raises(ValidationError) as raised:
        cluster.full_clean()
    assert set(raised.value.message_dict) == {
        "bootstrap_servers",
        "sasl_mechanism",
        "sasl_username",
        "sasl_password",
    }


def test_it_accepts_a_ca_bundle_of_several_certificates(pki):
    bundle = pki.ca_pem + Pki("Second CA").ca_pem
    conn = replace(OK, security_protocol="SSL", ssl_ca_pem=bundle)
    assert connection_errors(conn) == {}
