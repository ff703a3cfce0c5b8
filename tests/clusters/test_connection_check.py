"""Test connection: which step failed, with the error the resolver, socket or Kafka gave."""

import pytest

from apps.kafka_layer.connection import ConnectionSettings
from apps.kafka_layer.connection_check import STEPS, connection_check


def results(check) -> dict:
    return {s.step: s.ok for s in check.steps}


def test_it_stops_at_dns_for_a_name_that_does_not_resolve():
    check = connection_check(connection=ConnectionSettings("no-such-broker.invalid:9092"))
    assert not check.ok and check.failed.step == "DNS"
    assert "no-such-broker.invalid" in check.failed.detail
    assert [s.step for s in check.steps] == list(STEPS)
    assert [s.ok for s in check.steps[1:]] == [None] * 4


def test_it_stops_at_tcp_for_a_closed_port():
    check = connection_check(connection=ConnectionSettings("127.0.0.1:1"))
    assert check.failed.step == "TCP" and "Connection refused" in check.failed.detail
    assert results(check)["DNS"] is True


def test_one_answering_address_is_enough_and_the_others_are_named():
    check = connection_check(connection=ConnectionSettings("no-such-broker.invalid:1,127.0.0.1:1"))
    assert check.failed.step == "TCP"
    assert "no-such-broker.invalid" in check.steps[0].detail and check.steps[0].ok


@pytest.mark.integration
def test_it_passes_against_the_dev_cluster(kafka_cluster):
    check = connection_check(connection=ConnectionSettings(kafka_cluster.bootstrap_servers))
    assert check.ok, check.failed
    assert results(check) == {
        "DNS": True,
        "TCP": True,
        "TLS handshake": None,
        "SASL authentication": None,
        "authorization": True,
    }


@pytest.mark.integration
def test_it_names_the_tls_handshake_when_the_listener_speaks_plaintext(kafka_cluster):
    connection = ConnectionSettings(kafka_cluster.bootstrap_servers, security_protocol="SSL")
    check = connection_check(connection=connection)
    assert check.failed.step == "TLS handshake"
    assert "SSL" in check.failed.detail and "127.0.0.1" in check.failed.detail  # librdkafka


@pytest.mark.integration
def test_it_names_sasl_when_the_listener_has_no_sasl(kafka_cluster):
    connection = ConnectionSettings(
        kafka_cluster.bootstrap_servers,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_username="balancer",
        sasl_password="x",
    )
    check = connection_check(connection=connection)
    assert check.failed.step == "SASL authentication" and "SASL" in check.failed.detail
