"""Real HTTP receivers for the outbound tests: http.server in a thread on a chosen
loopback address, recording what reaches it and answering with a scripted reply."""

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int = 200
    body: bytes = b"ok"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Hit:
    path: str
    headers: dict[str, str]


@dataclass
class Receiver:
    host: str
    port: int
    reply: Reply = field(default_factory=Reply)
    hits: list[Hit] = field(default_factory=list)


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class _Server6(_Server):
    address_family = socket.AF_INET6


@contextmanager
def receiver_running(host: str = "127.0.0.1", port: int = 0) -> Iterator[Receiver]:
    """A receiver listening on `host` (bound on entry: no wait before the first request)."""
    state = Receiver(host=host, port=port)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            if length:
                self.rfile.read(length)
            with lock:
                state.hits.append(Hit(self.path, dict(self.headers.items())))
            reply = state.reply
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        do_GET = do_POST = _answer  # noqa: N815 (http.server's naming)

        def log_message(self, *args) -> None:
            pass

    server_class = _Server6 if ":" in host else _Server
    server = server_class((host, port), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def resolver_patch(monkeypatch, answers: dict[str, list[list[str]]]) -> list[str]:
    """Make socket.getaddrinfo answer `name` with the next list of addresses from
    answers[name] (the last list once the others are spent); other names resolve as
    usual. Returns the log of names looked up."""
    real = socket.getaddrinfo
    looked_up: list[str] = []

    def fake(host, port, family=0, type=0, proto=0, flags=0):  # noqa: A002 (socket's names)
        name = host.decode() if isinstance(host, bytes) else host
        if name not in answers:
            return real(host, port, family, type, proto, flags)
        looked_up.append(name)
        queue = answers[name]
        addresses = queue.pop(0) if len(queue) > 1 else queue[0]
        results = []
        for address in addresses:
            if ":" in address:
                results.append(
                    (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, int(port), 0, 0))
                )
            else:
                results.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port))))
        return results

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return looked_up
