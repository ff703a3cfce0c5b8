"""The secure profile's TLS material, made with Debian's openssl at the first `up`.

`<run_dir>/pki/` (0700): a CA (`ca.pem`, `ca.key`), a certificate for the brokers and
controllers (CN=broker, SAN 127.0.0.1/localhost, with `broker-keystore.pem`: key and
certificate in one file, the PEM key store Kafka reads) and one client certificate per
name (CN=<name>, principal `User:CN=<name>`). Keys are unencrypted PKCS#8 (0600), the
form Kafka's PEM key store and every client library read. Kept across up/down; made
again only when missing.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from pathlib import Path

from .errors import DevClusterError

BROKER_CN = "broker"
CERT_DAYS = 30
_EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]


def pki_dir(run_dir: Path) -> Path:
    return run_dir / "pki"


def ca_path(run_dir: Path) -> Path:
    return pki_dir(run_dir) / "ca.pem"


def cert_path(run_dir: Path, name: str) -> Path:
    return pki_dir(run_dir) / f"{name}.pem"


def key_path(run_dir: Path, name: str) -> Path:
    return pki_dir(run_dir) / f"{name}.key"


def keystore_path(run_dir: Path) -> Path:
    return pki_dir(run_dir) / f"{BROKER_CN}-keystore.pem"


def _openssl(directory: Path, *args: str) -> None:
    try:
        result = subprocess.run(
            ["openssl", *args], cwd=directory, capture_output=True, text=True, check=False
        )
    except FileNotFoundError as exc:
        raise DevClusterError(
            "openssl not found; install it with: apt-get install -y openssl"
        ) from exc
    if result.returncode != 0:
        raise DevClusterError(f"openssl {args[0]} failed: {result.stderr.strip()}")


def _issue(directory: Path, name: str, *, server: bool) -> None:
    if (directory / f"{name}.pem").exists():
        return
    ext = directory / f"{name}.ext"
    lines = ["basicConstraints=CA:FALSE", "keyUsage=digitalSignature,keyEncipherment"]
    if server:
        # Brokers are servers to clients and clients of each other and the controller.
        lines += [
            "extendedKeyUsage=serverAuth,clientAuth",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ]
    else:
        lines.append("extendedKeyUsage=clientAuth")
    ext.write_text("\n".join(lines) + "\n")
    _openssl(
        directory,
        "req",
        "-new",
        *_EC_KEY,
        "-keyout",
        f"{name}.key",
        "-out",
        f"{name}.csr",
        "-subj",
        f"/CN={name}",
    )
    (directory / f"{name}.key").chmod(0o600)
    _openssl(
        directory,
        "x509",
        "-req",
        "-in",
        f"{name}.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        str(CERT_DAYS),
        "-sha256",
        "-extfile",
        ext.name,
        "-out",
        f"{name}.pem",
    )
    (directory / f"{name}.csr").unlink()
    ext.unlink()


def pki_ensure(run_dir: Path, clients: Iterable[str]) -> None:
    """The CA, the brokers' certificate and key store, and a certificate per client name."""
    directory = pki_dir(run_dir)
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    if not (directory / "ca.pem").exists():
        _openssl(
            directory,
            "req",
            "-x509",
            *_EC_KEY,
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            str(CERT_DAYS),
            "-subj",
            "/CN=kafka-balancer dev CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        )
        (directory / "ca.key").chmod(0o600)
    _issue(directory, BROKER_CN, server=True)
    store = keystore_path(run_dir)
    if not store.exists():
        store.touch(0o600)
        store.write_text(
            key_path(run_dir, BROKER_CN).read_text() + cert_path(run_dir, BROKER_CN).read_text()
        )
    for name in clients:
        _issue(directory, name, server=False)
