"""Checks of a cluster's connection settings, with messages an operator can act on.

`connection_errors` is the one check: the model's clean() (so admin and
dashboard forms) and the API call it. Errors are keyed by Cluster field name.
"""

import re
from collections.abc import Callable

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from apps.kafka_layer.connection import SASL_MECHANISMS, SECURITY_PROTOCOLS, ConnectionSettings

_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
_HOST_PORT = re.compile(
    rf"^(?P<host>{_LABEL}(?:\.{_LABEL})*|\[[0-9A-Fa-f:.]+\]):(?P<port>\d{{1,5}})$"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_EXAMPLE = "e.g. broker-1.example.com:9092,broker-2.example.com:9092"


def bootstrap_servers_normalize(value: str) -> str:
    """Spaces around the commas dropped (the form accepts `a:9092, b:9092`)."""
    return ",".join(part.strip() for part in value.split(","))


def bootstrap_servers_errors(value: str) -> list[str]:
    if not value.strip():
        return [f"Give at least one host:port ({_EXAMPLE})."]
    errors = []
    for part in (p.strip() for p in value.split(",")):
        if not part:
            errors.append(f"An empty entry between commas: list host:port pairs ({_EXAMPLE}).")
            continue
        match = _HOST_PORT.match(part)
        if match is None:
            errors.append(f'"{part}" is not host:port ({_EXAMPLE}).')
        elif not 1 <= int(match["port"]) <= 65535:
            errors.append(f'"{part}": the port must be between 1 and 65535.')
    return errors


def pem_certificates_load(text: str) -> list[x509.Certificate]:
    """Every certificate in `text`; ValueError when there is none or one is malformed."""
    if "-----BEGIN CERTIFICATE-----" not in text:
        raise ValueError("no PEM certificate in it (it must contain -----BEGIN CERTIFICATE-----)")
    try:
        return x509.load_pem_x509_certificates(text.encode())
    except ValueError as exc:
        raise ValueError(f"a certificate in it does not parse ({exc})") from exc


def pem_private_key_load(text: str):
    """The private key in `text`; ValueError saying why it cannot be used."""
    try:
        return serialization.load_pem_private_key(text.encode(), password=None)
    except TypeError as exc:  # cryptography's way to say "encrypted, no password given"
        raise ValueError(
            "the key is encrypted; give it unencrypted (e.g. `openssl pkey -in key.pem`)"
        ) from exc
    except Exception as exc:  # ValueError or UnsupportedAlgorithm
        raise ValueError(
            "it is not a PEM private key (-----BEGIN PRIVATE KEY----- or "
            "-----BEGIN RSA/EC PRIVATE KEY-----)"
        ) from exc


def _public_der(key) -> bytes:
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def connection_errors(conn: ConnectionSettings) -> dict[str, list[str]]:
    """Every problem of `conn`, by field; empty when it can be used as it is."""
    errors: dict[str, list[str]] = {}

    def add(name: str, message: str) -> None:
        errors.setdefault(name, []).append(message)

    for message in bootstrap_servers_errors(conn.bootstrap_servers):
        add("bootstrap_servers", message)
    if conn.security_protocol not in SECURITY_PROTOCOLS:
        add("security_protocol", f"Pick one of {', '.join(SECURITY_PROTOCOLS)}.")
        return errors
    _sasl_errors(conn, add)
    _tls_errors(conn, add)
    return errors


def _sasl_errors(conn: ConnectionSettings, add: Callable[[str, str], None]) -> None:
    """SASL's fields: all set under a SASL protocol, none set under another."""
    sasl_fields = {
        "sasl_mechanism": conn.sasl_mechanism,
        "sasl_username": conn.sasl_username,
        "sasl_password": conn.sasl_password,
    }
    if not conn.uses_sasl:
        for name, value in sasl_fields.items():
            if value:
                add(
                    name,
                    f"Only used with SASL_PLAINTEXT or SASL_SSL, not {conn.security_protocol}: "
                    "clear it or pick one of those protocols.",
                )
        return
    if conn.sasl_mechanism not in SASL_MECHANISMS:
        add("sasl_mechanism", f"SASL needs a mechanism: {', '.join(SASL_MECHANISMS)}.")
    if not conn.sasl_username:
        add("sasl_username", f"{conn.security_protocol} needs a username.")
    if not conn.sasl_password:
        add("sasl_password", f"{conn.security_protocol} needs a password.")
    for name in ("sasl_username", "sasl_password"):
        if _CONTROL.search(sasl_fields[name]):
            add(name, "Control characters (such as line breaks) are not allowed.")


def _tls_errors(conn: ConnectionSettings, add: Callable[[str, str], None]) -> None:
    """TLS's fields: none set without TLS; with it, a readable CA, and a client
    certificate with its own private key, or neither."""
    tls_fields = {
        "ssl_ca_pem": conn.ssl_ca_pem,
        "ssl_certificate_pem": conn.ssl_certificate_pem,
        "ssl_key_pem": conn.ssl_key_pem,
    }
    if not conn.uses_tls:
        for name, value in tls_fields.items():
            if value:
                add(
                    name,
                    f"Only used with SSL or SASL_SSL, not {conn.security_protocol}: "
                    "clear it or pick one of those protocols.",
                )
        return
    if conn.ssl_ca_pem:
        try:
            pem_certificates_load(conn.ssl_ca_pem)
        except ValueError as exc:
            add("ssl_ca_pem", f"Not a CA certificate: {exc}.")
    if bool(conn.ssl_certificate_pem) != bool(conn.ssl_key_pem):
        missing = "ssl_key_pem" if conn.ssl_certificate_pem else "ssl_certificate_pem"
        add(missing, "Mutual TLS needs both the client certificate and its private key.")
        return
    if not conn.ssl_certificate_pem:
        return
    certificate = key = None
    try:
        certificate = pem_certificates_load(conn.ssl_certificate_pem)[0]
    except ValueError as exc:
        add("ssl_certificate_pem", f"Not a client certificate: {exc}.")
    try:
        key = pem_private_key_load(conn.ssl_key_pem)
    except ValueError as exc:
        add("ssl_key_pem", f"Not a usable private key: {exc}.")
    if certificate is not None and key is not None:
        if _public_der(certificate.public_key()) != _public_der(key.public_key()):
            add(
                "ssl_key_pem",
                "This key does not belong to the client certificate (the first "
                "certificate of the chain must be the client's own).",
            )
