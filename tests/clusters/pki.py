"""A throwaway PKI for tests: a CA, server and client certificates, keys in PEM forms."""

import datetime
import ipaddress
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Issued:
    certificate_pem: str
    key_pem: str  # PKCS#8, unencrypted
    key: object


def _key_pem(key, fmt=serialization.PrivateFormat.PKCS8, encryption=None) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, fmt, encryption or serialization.NoEncryption()
    ).decode()


def pkcs1_pem(key) -> str:
    """An RSA key as `-----BEGIN RSA PRIVATE KEY-----` (what openssl genrsa wrote)."""
    return _key_pem(key, serialization.PrivateFormat.TraditionalOpenSSL)


def encrypted_pem(key, password: bytes = b"secret") -> str:
    return _key_pem(key, encryption=serialization.BestAvailableEncryption(password))


class Pki:
    def __init__(self, name: str = "Test CA") -> None:
        self._ca_key = ec.generate_private_key(ec.SECP256R1())
        self._ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = datetime.datetime.now(datetime.UTC)
        self.ca_certificate = (
            x509.CertificateBuilder()
            .subject_name(self._ca_name)
            .issuer_name(self._ca_name)
            .public_key(self._ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(self._ca_key, hashes.SHA256())
        )
        self.ca_pem = self.ca_certificate.public_bytes(serialization.Encoding.PEM).decode()

    def issue(self, common_name: str, *, hosts: tuple[str, ...] = (), rsa_key: bool = False):
        key = (
            rsa.generate_private_key(public_exponent=65537, key_size=2048)
            if rsa_key
            else ec.generate_private_key(ec.SECP256R1())
        )
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(self._ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(
                x509.ExtendedKeyUsage(
                    [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                ),
                critical=False,
            )
        )
        if hosts:
            names = []
            for host in hosts:
                try:
                    names.append(x509.IPAddress(ipaddress.ip_address(host)))
                except ValueError:
                    names.append(x509.DNSName(host))
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        certificate = builder.sign(self._ca_key, hashes.SHA256())
        return Issued(
            certificate_pem=certificate.public_bytes(serialization.Encoding.PEM).decode(),
            key_pem=_key_pem(key),
            key=key,
        )
