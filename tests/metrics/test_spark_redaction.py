"""Spark masks every Kafka source option that carries a secret (plans, logs, errors)."""

import re

from apps.kafka_layer.connection import ClientTimeouts, ConnectionSettings, java_client_properties
from spark_jobs.session import REDACTION_REGEX
from tests.clusters.pki import Pki

TIMEOUTS = ClientTimeouts(request=10, connect=5)


def test_it_redacts_the_jaas_config_and_the_private_key_but_not_the_certificates():
    pki = Pki()
    client = pki.issue("balancer")
    options = {
        **java_client_properties(
            ConnectionSettings(
                bootstrap_servers="k1:9093",
                security_protocol="SASL_SSL",
                sasl_mechanism="SCRAM-SHA-512",
                sasl_username="balancer",
                sasl_password="s3cret-pw",
                ssl_ca_pem=pki.ca_pem,
            ),
            timeouts=TIMEOUTS,
        ),
        **java_client_properties(
            ConnectionSettings(
                bootstrap_servers="k1:9094",
                security_protocol="SSL",
                ssl_ca_pem=pki.ca_pem,
                ssl_certificate_pem=client.certificate_pem,
                ssl_key_pem=client.key_pem,
            ),
            timeouts=TIMEOUTS,
        ),
    }
    redacted = {k for k in options if re.search(REDACTION_REGEX, f"kafka.{k}")}

    secret_bearing = {k for k, v in options.items() if "s3cret-pw" in v or "PRIVATE KEY" in v}
    assert secret_bearing == {"sasl.jaas.config", "ssl.keystore.key"}
    assert redacted == secret_bearing
