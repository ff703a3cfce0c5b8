"""Connecting to the checked address keeps TLS about the name: the certificate is
verified for the URL's host (SNI included), not for the address connected to."""

import datetime
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from devkit.users import user_make

from apps.notifications.models import ChannelKind, NotificationChannel
from apps.notifications.services.channels import notification_channel_test
from tests.support.http_receivers import resolver_patch

pytestmark = pytest.mark.django_db

NAME = "hooks.internal.test"
OTHER = "other.internal.test"


def _certificate(tmp_path, name: str):
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
def tls_receiver(tmp_path):
    """An HTTPS receiver on 127.0.0.1 whose certificate is for NAME; records SNI names."""
    cert_path, key_path = _certificate(tmp_path, NAME)
    seen: dict[str, list] = {"sni": [], "hosts": []}
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    context.sni_callback = lambda sock, server_name, ctx: seen["sni"].append(server_name)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's naming)
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            seen["hosts"].append(self.headers["Host"])
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server.server_address[1], cert_path, seen
    server.shutdown()
    server.server_close()
    thread.join()


def test_it_verifies_the_certificate_for_the_name_at_the_checked_address(
    settings, monkeypatch, tls_receiver, empty_cluster
):
    port, cert_path, seen = tls_receiver
    settings.NOTIFICATIONS_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert_path))
    resolver_patch(monkeypatch, {NAME: [["127.0.0.1"]], OTHER: [["127.0.0.1"]]})
    admin_member = user_make("ada", "admin")
    channel = NotificationChannel.objects.create(
        cluster=empty_cluster, name="tls", kind=ChannelKind.SLACK, url=f"https://{NAME}:{port}/x"
    )

    result = notification_channel_test(channel=channel, actor=admin_member)

    assert result.ok, result.error
    assert seen["sni"] == [NAME] and seen["hosts"] == [f"{NAME}:{port}"]

    # The same trusted certificate at the same address, reached by another name: refused.
    other = NotificationChannel.objects.create(
        cluster=empty_cluster, name="other", kind=ChannelKind.SLACK, url=f"https://{OTHER}:{port}/x"
    )
    refused = notification_channel_test(channel=other, actor=admin_member)
    assert not refused.ok and refused.error.startswith("SSLError")
    assert seen["hosts"] == [f"{NAME}:{port}"]
