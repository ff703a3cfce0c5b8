"""A failing connection to a secured cluster logs and records no secret."""

import logging
import socket

import pytest

from apps.clusters.models import Cluster
from apps.clusters.services import cluster_sync
from apps.clusters.sync_outcome import SyncOutcome
from apps.kafka_layer import kafka_python_adapter
from apps.plans.kafka_ops import KafkaOpError, LiveKafka

pytestmark = pytest.mark.django_db

PASSWORD = "Never-Log-This-8231"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def secured(settings, pki, client_cert) -> Cluster:
    settings.KAFKA_REQUEST_TIMEOUT = 1.0
    settings.KAFKA_CONNECT_TIMEOUT = 1.0
    return Cluster.objects.create(
        name="secured",
        bootstrap_servers=f"127.0.0.1:{closed_port()}",
        security_protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_username="balancer",
        sasl_password=PASSWORD,
        ssl_ca_pem=pki.ca_pem,
        ssl_certificate_pem=client_cert.certificate_pem,
        ssl_key_pem=client_cert.key_pem,
    )


def test_it_keeps_the_password_and_key_out_of_logs_and_errors(secured, caplog, capfd):
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="kafka")
    errors = []

    assert cluster_sync(cluster=secured) is SyncOutcome.FAILED
    secured.refresh_from_db()
    errors.append(secured.last_sync_error)
    with pytest.raises(Exception) as raised:  # noqa: B017 (kafka-python's own errors)
        kafka_python_adapter.reassignments_list(connection=secured.connection, partitions=None)
    errors.append(repr(raised.value))
    kafka = LiveKafka(connection=secured.connection)
    with pytest.raises(KafkaOpError) as op_error:
        kafka.replica_sizes()
    errors.append(str(op_error.value))

    out, err = capfd.readouterr()
    seen = "\n".join([caplog.text, out, err, *errors])
    # The DEBUG line with kafka-python's whole configuration was emitted, redacted.
    assert "Starting KafkaAdminClient with configuration" in caplog.text
    assert "'sasl_plain_password': '********'" in caplog.text
    assert PASSWORD not in seen
    assert client_cert_line(secured) not in seen


def client_cert_line(cluster: Cluster) -> str:
    return cluster.ssl_key_pem.splitlines()[1]  # a line of the key's body
