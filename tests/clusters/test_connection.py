"""apps.kafka_layer.connection: one set of connection settings, said right to every client."""

import base64
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient
from cryptography.hazmat.primitives import serialization
from kafka import KafkaAdminClient

from apps.kafka_layer import connection as conn_module
from apps.kafka_layer.connection import (
    ClientTimeouts,
    ConnectionSettings,
    java_client_properties,
    kafka_python_config,
    librdkafka_config,
    ssl_context_build,
)
from tests.clusters.pki import Issued, Pki, pkcs1_pem

TIMEOUTS = ClientTimeouts(request=10, connect=3)
PASSWORD = 'pa$$ "quoted" back\\slash'


def scram_over_tls(pki: Pki, **changes) -> ConnectionSettings:
    base = ConnectionSettings(
        bootstrap_servers="b1.example.com:9093,b2.example.com:9093",
        security_protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_username="balancer",
        sasl_password=PASSWORD,
        ssl_ca_pem=pki.ca_pem,
    )
    return replace(base, **changes)


def mutual_tls(pki: Pki, client: Issued, **changes) -> ConnectionSettings:
    base = ConnectionSettings(
        bootstrap_servers="b1.example.com:9094",
        security_protocol="SSL",
        ssl_ca_pem=pki.ca_pem,
        ssl_certificate_pem=client.certificate_pem,
        ssl_key_pem=client.key_pem,
    )
    return replace(base, **changes)


# --- librdkafka -------------------------------------------------------------------------


def test_it_gives_librdkafka_only_the_bootstrap_list_and_timeouts_for_plaintext():
    config = librdkafka_config(ConnectionSettings(bootstrap_servers="k1:9092"), timeouts=TIMEOUTS)
    assert config == {
        "bootstrap.servers": "k1:9092",
        "security.protocol": "PLAINTEXT",
        "socket.timeout.ms": 10_000,
        "socket.connection.setup.timeout.ms": 3_000,
        "reconnect.backoff.max.ms": 1000,
    }


def test_it_gives_librdkafka_scram_credentials_and_the_ca_inline(pki):
    config = librdkafka_config(scram_over_tls(pki), timeouts=TIMEOUTS)
    assert config["security.protocol"] == "SASL_SSL"
    assert config["sasl.mechanism"] == "SCRAM-SHA-512"
    assert config["sasl.username"] == "balancer"
    assert config["sasl.password"] == PASSWORD
    assert config["ssl.ca.pem"] == pki.ca_pem
    assert config["ssl.endpoint.identification.algorithm"] == "https"
    assert "ssl.certificate.pem" not in config and "ssl.key.pem" not in config


def test_it_gives_librdkafka_the_client_pair_for_mutual_tls(pki, client_cert):
    config = librdkafka_config(mutual_tls(pki, client_cert), timeouts=TIMEOUTS)
    assert config["security.protocol"] == "SSL"
    assert config["ssl.certificate.pem"] == client_cert.certificate_pem
    assert config["ssl.key.pem"] == client_cert.key_pem
    assert not any(k.startswith("sasl.") for k in config)


def test_it_turns_librdkafka_hostname_verification_off_only_when_asked(pki):
    on = librdkafka_config(scram_over_tls(pki), timeouts=TIMEOUTS)
    off = librdkafka_config(scram_over_tls(pki, ssl_verify_hostname=False), timeouts=TIMEOUTS)
    assert on["ssl.endpoint.identification.algorithm"] == "https"
    assert off["ssl.endpoint.identification.algorithm"] == "none"


def test_it_sends_sasl_plain_without_tls_settings():
    conn = ConnectionSettings(
        bootstrap_servers="k1:9092",
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_username="u",
        sasl_password="p",
    )
    config = librdkafka_config(conn, timeouts=TIMEOUTS)
    assert config["sasl.mechanism"] == "PLAIN"
    assert not any(k.startswith("ssl.") for k in config)


def test_it_builds_configurations_librdkafka_accepts(pki, client_cert):
    # librdkafka parses the PEM material and checks every property when the client is created.
    for conn in (
        scram_over_tls(pki, ssl_certificate_pem=client_cert.certificate_pem),
        scram_over_tls(
            pki, ssl_certificate_pem=client_cert.certificate_pem, sasl_mechanism="PLAIN"
        ),
        mutual_tls(pki, client_cert),
        mutual_tls(pki, client_cert, ssl_verify_hostname=False),
    ):
        conn = replace(conn, ssl_key_pem=client_cert.key_pem, bootstrap_servers="127.0.0.1:1")
        AdminClient(librdkafka_config(conn, timeouts=TIMEOUTS))
    broken = replace(mutual_tls(pki, client_cert), ssl_key_pem="-----BEGIN PRIVATE KEY-----\nAA")
    with pytest.raises(KafkaException):
        AdminClient(librdkafka_config(broken, timeouts=TIMEOUTS))


# --- kafka-python -----------------------------------------------------------------------


def test_it_gives_kafka_python_a_list_of_servers_and_timeouts_for_plaintext():
    config = kafka_python_config(
        ConnectionSettings(bootstrap_servers="k1:9092, k2:9092"), timeouts=TIMEOUTS, client_id="x"
    )
    assert config == {
        "bootstrap_servers": ["k1:9092", "k2:9092"],
        "client_id": "x",
        "security_protocol": "PLAINTEXT",
        "request_timeout_ms": 10_000,
        "bootstrap_timeout_ms": 3_000,
        "reconnect_backoff_max_ms": 1000,
    }


def test_it_gives_kafka_python_scram_credentials_and_a_tls_context(pki):
    config = kafka_python_config(scram_over_tls(pki), timeouts=TIMEOUTS, client_id="x")
    assert config["security_protocol"] == "SASL_SSL"
    assert config["sasl_mechanism"] == "SCRAM-SHA-512"
    assert config["sasl_plain_username"] == "balancer"
    assert config["sasl_plain_password"] == PASSWORD
    assert isinstance(config["ssl_context"], ssl.SSLContext)
    assert config["ssl_context"].check_hostname and config["ssl_check_hostname"]
    assert config["ssl_context"].verify_mode == ssl.CERT_REQUIRED


def test_it_only_passes_settings_kafka_pythons_admin_client_knows(pki, client_cert):
    for conn in (scram_over_tls(pki), mutual_tls(pki, client_cert)):
        config = kafka_python_config(conn, timeouts=TIMEOUTS, client_id="x")
        assert set(config) <= set(KafkaAdminClient.DEFAULT_CONFIG), set(config) - set(
            KafkaAdminClient.DEFAULT_CONFIG
        )


@contextmanager
def tls_server(issued: Issued, *, client_ca_pem: str | None = None) -> Iterator[tuple[int, list]]:
    """A TLS server on 127.0.0.1 answering b"ok"; yields its port and the client names seen."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.NamedTemporaryFile("w", suffix=".pem") as pem:
        pem.write(issued.certificate_pem + issued.key_pem)
        pem.flush()
        context.load_cert_chain(pem.name)
    if client_ca_pem:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cadata=client_ca_pem)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()
    seen: list = []

    def serve() -> None:
        while not stop.is_set():
            try:
                raw, _ = listener.accept()
            except TimeoutError:
                continue
            try:
                with context.wrap_socket(raw, server_side=True) as tls:
                    peer = tls.getpeercert()
                    seen.append(dict(x[0] for x in peer["subject"])["commonName"] if peer else None)
                    tls.sendall(b"ok")
            except (ssl.SSLError, OSError):
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], seen
    finally:
        stop.set()
        thread.join()
        listener.close()


def handshake(conn: ConnectionSettings, port: int, server_hostname: str) -> bytes:
    context = ssl_context_build(conn)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with context.wrap_socket(raw, server_hostname=server_hostname) as tls:
            return tls.recv(2)


def test_it_trusts_the_configured_ca_and_checks_the_broker_hostname(pki, server_cert):
    conn = scram_over_tls(pki)
    with tls_server(server_cert) as (port, _seen):
        assert handshake(conn, port, "localhost") == b"ok"
        with pytest.raises(ssl.SSLCertVerificationError, match="match|mismatch"):
            handshake(conn, port, "broker.example.com")
        off = replace(conn, ssl_verify_hostname=False)
        assert handshake(off, port, "broker.example.com") == b"ok"


def test_it_rejects_a_broker_whose_certificate_another_ca_signed(server_cert):
    other = scram_over_tls(Pki("Another CA"), ssl_verify_hostname=False)
    with tls_server(server_cert) as (port, _seen):
        with pytest.raises(ssl.SSLCertVerificationError, match="unknown ca|unable to get local"):
            handshake(other, port, "localhost")


def test_it_presents_the_client_certificate_for_mutual_tls(pki, server_cert, client_cert):
    with tls_server(server_cert, client_ca_pem=pki.ca_pem) as (port, seen):
        assert handshake(mutual_tls(pki, client_cert), port, "localhost") == b"ok"
        with pytest.raises((ssl.SSLError, ConnectionError)):
            handshake(scram_over_tls(pki), port, "localhost")  # no client certificate
    assert seen[0] == "balancer"


def test_it_loads_the_client_pair_through_a_private_file_it_removes(pki, client_cert, monkeypatch):
    made: list[tuple[str, int]] = []
    real_mkstemp = tempfile.mkstemp

    def spy(*args, **kwargs):
        fd, path = real_mkstemp(*args, **kwargs)
        made.append((path, os.stat(path).st_mode & 0o777))
        return fd, path

    monkeypatch.setattr(conn_module.tempfile, "mkstemp", spy)
    ssl_context_build(mutual_tls(pki, client_cert))
    assert [mode for _path, mode in made] == [0o600]
    assert not Path(made[0][0]).exists()

    made.clear()
    with pytest.raises(ssl.SSLError):
        ssl_context_build(mutual_tls(pki, client_cert, ssl_key_pem=pki.issue("x").key_pem))
    assert made and not Path(made[0][0]).exists()


# --- Kafka's Java client (Spark) --------------------------------------------------------


def test_it_gives_java_a_scram_login_module_and_a_pem_trust_store(pki):
    props = java_client_properties(scram_over_tls(pki), timeouts=TIMEOUTS)
    assert props == {
        "bootstrap.servers": "b1.example.com:9093,b2.example.com:9093",
        "security.protocol": "SASL_SSL",
        "socket.connection.setup.timeout.ms": "3000",
        "socket.connection.setup.timeout.max.ms": "3000",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": (
            "org.apache.kafka.common.security.scram.ScramLoginModule required "
            'username="balancer" password="pa$$ \\"quoted\\" back\\\\slash";'
        ),
        "ssl.endpoint.identification.algorithm": "https",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.certificates": pki.ca_pem,
    }


def test_it_gives_java_the_plain_login_module_for_plain(pki):
    props = java_client_properties(scram_over_tls(pki, sasl_mechanism="PLAIN"), timeouts=TIMEOUTS)
    assert props["sasl.jaas.config"].startswith(
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
    )


def test_it_gives_java_a_pem_key_store_with_the_key_as_pkcs8(pki, client_cert):
    conn = mutual_tls(pki, client_cert, ssl_key_pem=pkcs1_pem(client_cert.key))
    props = java_client_properties(conn, timeouts=TIMEOUTS)
    assert props["ssl.keystore.type"] == "PEM"
    assert props["ssl.keystore.certificate.chain"] == client_cert.certificate_pem
    key = props["ssl.keystore.key"]
    assert key.startswith("-----BEGIN PRIVATE KEY-----")
    assert serialization.load_pem_private_key(key.encode(), None).private_numbers() == (
        client_cert.key.private_numbers()
    )
    assert not any(k.startswith("sasl.") for k in props)


def test_it_turns_java_hostname_verification_off_with_an_empty_algorithm(pki):
    props = java_client_properties(
        scram_over_tls(pki, ssl_verify_hostname=False), timeouts=TIMEOUTS
    )
    assert props["ssl.endpoint.identification.algorithm"] == ""


def test_it_leaves_trust_to_the_jvm_when_no_ca_is_given(pki):
    props = java_client_properties(scram_over_tls(pki, ssl_ca_pem=""), timeouts=TIMEOUTS)
    assert "ssl.truststore.type" not in props and "ssl.truststore.certificates" not in props


# --- what may be shown ---------------------------------------------------------------------


def test_it_never_shows_secrets_in_repr_or_the_redacted_view(pki, client_cert):
    conn = mutual_tls(
        pki,
        client_cert,
        security_protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-256",
        sasl_username="balancer",
        sasl_password=PASSWORD,
    )
    shown = repr(conn) + str(conn.redacted())
    assert PASSWORD not in shown and "PRIVATE KEY" not in shown
    assert conn.redacted()["sasl_password"] == conn.redacted()["ssl_key_pem"] == "********"
    assert "balancer" in shown


JAVA_CHECK = Path(__file__).with_name("KafkaConfigCheck.java")
KAFKA_LIBS = Path(__file__).resolve().parents[2] / ".cache" / "kafka" / "libs"


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("java") is None or not any(KAFKA_LIBS.glob("kafka-clients-*.jar")),
    reason="needs java and the Kafka jars (scripts/fetch-kafka-jars)",
)
def test_it_builds_properties_kafkas_java_client_accepts(pki, client_cert, tmp_path):
    # The Java admin client parses the JAAS line and loads the PEM stores when created.
    conns = {
        "scram-mtls": scram_over_tls(
            pki,
            bootstrap_servers="127.0.0.1:1",
            ssl_certificate_pem=client_cert.certificate_pem,
            ssl_key_pem=pkcs1_pem(client_cert.key),  # converted: Java reads PKCS#8 only
        ),
        "plain-no-hostname": scram_over_tls(
            pki, bootstrap_servers="127.0.0.1:1", sasl_mechanism="PLAIN", ssl_verify_hostname=False
        ),
    }
    files = []
    for name, conn in conns.items():
        props = java_client_properties(conn, timeouts=TIMEOUTS)
        path = tmp_path / name
        path.write_text(
            "".join(f"{k}={base64.b64encode(v.encode()).decode()}\n" for k, v in props.items())
        )
        files.append(str(path))
    done = subprocess.run(
        ["java", "-cp", f"{KAFKA_LIBS}/*", str(JAVA_CHECK), *files],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("created") == 2
