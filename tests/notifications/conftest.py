"""A real HTTP receiver on 127.0.0.1 (http.server in a thread), clusters, channels and
users for the notification tests. Loopback is internal, so the fixtures that deliver
there allow 127.0.0.0/8 (NOTIFICATIONS_ALLOWED_NETWORKS)."""

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from devkit.users import user_make
from django.contrib.auth.models import User

from apps.notifications.models import ChannelKind, NotificationChannel

SECRET = "s3cret-signing-key-0123456789abcdef"
SLACK_PATH = "/services/T0000/B0000/XXXXtokenXXXX"


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)


@dataclass
class Receiver:
    """Answers each POST with the next scripted status (200 once the script is spent)."""

    host: str
    port: int
    statuses: list[int] = field(default_factory=list)
    requests: list[Received] = field(default_factory=list)

    def url(self, path: str = "/hook") -> str:
        return f"http://{self.host}:{self.port}{path}"


LOOPBACK_ALLOWED = ["127.0.0.0/8"]


@pytest.fixture
def receiver(settings) -> Iterator[Receiver]:
    settings.NOTIFICATIONS_ALLOWED_NETWORKS = LOOPBACK_ALLOWED
    state = Receiver(host="127.0.0.1", port=0)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's naming)
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with lock:
                state.requests.append(Received(self.path, dict(self.headers.items()), body))
                status = state.statuses.pop(0) if state.statuses else 200
            reply = b"ok" if status < 300 else b"receiver says no"
            self.send_response(status)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):  # keep the test output clean
            pass

    # Bound (and listening) on construction: no wait is needed before the first request.
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture
def closed_port(settings) -> int:
    """A port nothing listens on (bound, then released)."""
    import socket

    settings.NOTIFICATIONS_ALLOWED_NETWORKS = LOOPBACK_ALLOWED
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def webhook(empty_cluster, receiver) -> NotificationChannel:
    return NotificationChannel.objects.create(
        cluster=empty_cluster,
        name="hook",
        kind=ChannelKind.WEBHOOK,
        url=receiver.url(),
        secret=SECRET,
    )


@pytest.fixture
def slack(empty_cluster, receiver) -> NotificationChannel:
    return NotificationChannel.objects.create(
        cluster=empty_cluster, name="slack", kind=ChannelKind.SLACK, url=receiver.url(SLACK_PATH)
    )


@pytest.fixture
def admin_member(db) -> User:
    return user_make("ada", "admin")


@pytest.fixture
def approver(db) -> User:
    return user_make("anna", "approver")
