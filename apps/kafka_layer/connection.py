"""How to reach one Kafka cluster, translated for each client library we use.

`ConnectionSettings` is what the operator configured (Cluster.connection builds
it); the three translators say the same thing to librdkafka (confluent-kafka),
kafka-python and Kafka's Java client (Spark's Kafka source). Every client of a
cluster is built from one of them, so a setting means the same everywhere.

No Django here: timeouts come in as arguments (`clients` reads the settings).
"""

import os
import ssl
import tempfile
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives import serialization

PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL = "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"
SECURITY_PROTOCOLS = (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")

# Kafka's Java login module per SASL mechanism.
_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}

REDACTED = "********"


@dataclass(frozen=True)
class ClientTimeouts:
    """Seconds: `connect` bounds TCP + TLS + SASL setup, `request` one request."""

    request: float
    connect: float


@dataclass(frozen=True)
class ConnectionSettings:
    bootstrap_servers: str
    security_protocol: str = PLAINTEXT
    sasl_mechanism: str = ""
    sasl_username: str = ""
    sasl_password: str = field(default="", repr=False)
    # PEM text. The CA and the client certificate are public; the key is secret.
    ssl_ca_pem: str = field(default="", repr=False)
    ssl_certificate_pem: str = field(default="", repr=False)
    ssl_key_pem: str = field(default="", repr=False)
    ssl_verify_hostname: bool = True

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol in (SASL_PLAINTEXT, SASL_SSL)

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in (SSL, SASL_SSL)

    @property
    def uses_client_certificate(self) -> bool:
        return self.uses_tls and bool(self.ssl_certificate_pem)

    def redacted(self) -> dict[str, Any]:
        """What may be shown or audited: secrets only say whether one is set."""
        return {
            "bootstrap_servers": self.bootstrap_servers,
            "security_protocol": self.security_protocol,
            "sasl_mechanism": self.sasl_mechanism,
            "sasl_username": self.sasl_username,
            "sasl_password": REDACTED if self.sasl_password else "",
            "ssl_ca_pem": self.ssl_ca_pem,
            "ssl_certificate_pem": self.ssl_certificate_pem,
            "ssl_key_pem": REDACTED if self.ssl_key_pem else "",
            "ssl_verify_hostname": self.ssl_verify_hostname,
        }


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


# --- librdkafka (confluent-kafka) ---------------------------------------------------


def librdkafka_config(conn: ConnectionSettings, *, timeouts: ClientTimeouts) -> dict[str, Any]:
    """Producer/consumer/admin configuration; PEM material is passed inline."""
    config: dict[str, Any] = {
        "bootstrap.servers": conn.bootstrap_servers,
        "security.protocol": conn.security_protocol,
        "socket.timeout.ms": _ms(timeouts.request),
        # Covers TCP connect, TLS handshake and SASL authentication (librdkafka: >= 1 s).
        "socket.connection.setup.timeout.ms": max(1000, _ms(timeouts.connect)),
        "reconnect.backoff.max.ms": 1000,
    }
    if conn.uses_sasl:
        config["sasl.mechanism"] = conn.sasl_mechanism
        config["sasl.username"] = conn.sasl_username
        config["sasl.password"] = conn.sasl_password
    if conn.uses_tls:
        config["ssl.endpoint.identification.algorithm"] = (
            "https" if conn.ssl_verify_hostname else "none"
        )
        if conn.ssl_ca_pem:
            config["ssl.ca.pem"] = conn.ssl_ca_pem
        if conn.uses_client_certificate:
            config["ssl.certificate.pem"] = conn.ssl_certificate_pem
            config["ssl.key.pem"] = conn.ssl_key_pem
    return config


# --- kafka-python ---------------------------------------------------------------------


def kafka_python_config(
    conn: ConnectionSettings, *, timeouts: ClientTimeouts, client_id: str
) -> dict[str, Any]:
    """Keyword arguments for kafka-python's clients (KafkaAdminClient here)."""
    config: dict[str, Any] = {
        "bootstrap_servers": [s.strip() for s in conn.bootstrap_servers.split(",") if s.strip()],
        "client_id": client_id,
        "security_protocol": conn.security_protocol,
        "request_timeout_ms": _ms(timeouts.request),
        # Its admin client has no separate connect timeout: bootstrap is the setup
        # (connect, TLS, SASL, ApiVersions) of the first connection.
        "bootstrap_timeout_ms": _ms(timeouts.connect),
        "reconnect_backoff_max_ms": 1000,
    }
    if conn.uses_sasl:
        config["sasl_mechanism"] = conn.sasl_mechanism
        config["sasl_plain_username"] = conn.sasl_username
        config["sasl_plain_password"] = conn.sasl_password
    if conn.uses_tls:
        config["ssl_context"] = ssl_context_build(conn)
        config["ssl_check_hostname"] = conn.ssl_verify_hostname
    return config


def ssl_context_build(conn: ConnectionSettings) -> ssl.SSLContext:
    """A client TLS context: the configured CA (else the system's), the client pair if any.

    Python can load a certificate chain only from a file, so the pair goes through
    a private (0600) temporary file that is removed as soon as it is loaded.
    """
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cadata=conn.ssl_ca_pem or None)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = conn.ssl_verify_hostname
    if conn.uses_client_certificate:
        # mkstemp creates the file 0600, readable by this user only.
        fd, path = tempfile.mkstemp(prefix="kafka-balancer-", suffix=".pem")
        try:
            with os.fdopen(fd, "w") as pem:
                pem.write(conn.ssl_certificate_pem.strip() + "\n")
                pem.write(conn.ssl_key_pem.strip() + "\n")
            context.load_cert_chain(path)
        finally:
            os.unlink(path)
    return context


# --- Kafka's Java client (Spark's Kafka source) -------------------------------------


def java_client_properties(conn: ConnectionSettings, *, timeouts: ClientTimeouts) -> dict[str, str]:
    """Java client properties. Spark's Kafka source takes each with a `kafka.` prefix."""
    props = {
        "bootstrap.servers": conn.bootstrap_servers,
        "security.protocol": conn.security_protocol,
        "socket.connection.setup.timeout.ms": str(_ms(timeouts.connect)),
        "socket.connection.setup.timeout.max.ms": str(_ms(timeouts.connect)),
    }
    if conn.uses_sasl:
        props["sasl.mechanism"] = conn.sasl_mechanism
        props["sasl.jaas.config"] = jaas_config(conn)
    if conn.uses_tls:
        # An empty algorithm is how the Java client turns hostname verification off.
        props["ssl.endpoint.identification.algorithm"] = "https" if conn.ssl_verify_hostname else ""
        if conn.ssl_ca_pem:
            props["ssl.truststore.type"] = "PEM"
            props["ssl.truststore.certificates"] = conn.ssl_ca_pem
        if conn.uses_client_certificate:
            props["ssl.keystore.type"] = "PEM"
            props["ssl.keystore.certificate.chain"] = conn.ssl_certificate_pem
            props["ssl.keystore.key"] = private_key_pkcs8(conn.ssl_key_pem)
    return props


def jaas_config(conn: ConnectionSettings) -> str:
    module = _LOGIN_MODULES[conn.sasl_mechanism]
    return (
        f"{module} required "
        f'username="{_jaas_quote(conn.sasl_username)}" '
        f'password="{_jaas_quote(conn.sasl_password)}";'
    )


def _jaas_quote(value: str) -> str:
    # The JAAS parser reads quoted strings with Java's StreamTokenizer: backslash escapes.
    return value.replace("\\", "\\\\").replace('"', '\\"')


def private_key_pkcs8(key_pem: str) -> str:
    """The key as unencrypted PKCS#8 PEM, the only form Kafka's PEM key store reads.

    (librdkafka and Python also read PKCS#1 and SEC1 keys, so only Java needs this.)
    """
    key = serialization.load_pem_private_key(key_pem.encode(), password=None)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
