"""Locust users for bench/bench_load.py (not run on its own: bench_load.py sets the
LOAD_* environment it reads).

- `LiveSocket`: one signed-in dashboard tab's websocket (the session cookie, an Origin
  Daphne allows), spread over the three live paths. Records the handshake ("connect"),
  the consumer's hello ("hello": handshake + auth + group joins), and for every probe
  event bench_load.py publishes each second, the delivery time ("probe": group_send in
  another process -> Redis -> Daphne -> this client). Real events are counted by type.
- `ApiReader`: token-authenticated reads of clusters, plans and loads, one request a
  second each: LOAD_RPS users make LOAD_RPS requests/s.
"""

from __future__ import annotations

import json
import os
import time

import websocket
from locust import HttpUser, User, constant, constant_throughput, events, task

CLUSTER = os.environ.get("LOAD_CLUSTER", "")
PLAN_ID = os.environ.get("LOAD_PLAN_ID", "0")
TOKEN = os.environ.get("LOAD_TOKEN", "")
SESSION_COOKIE = os.environ.get("LOAD_SESSION_COOKIE", "")
CLIENTS = int(os.environ.get("LOAD_CLIENTS", "0"))
RPS = int(os.environ.get("LOAD_RPS", "0"))
WS_PATHS = [
    "/ws/clusters/",
    f"/ws/clusters/{CLUSTER}/",
    f"/ws/clusters/{CLUSTER}/plans/",
]


def _record(name: str, started: float, error: Exception | None = None) -> None:
    events.request.fire(
        request_type="WS",
        name=name,
        response_time=(time.perf_counter() - started) * 1000,
        response_length=0,
        exception=error,
        context={},
    )


class LiveSocket(User):
    fixed_count = CLIENTS
    wait_time = constant(0)
    _next_path = 0

    def on_start(self) -> None:
        LiveSocket._next_path += 1
        self.path = WS_PATHS[LiveSocket._next_path % len(WS_PATHS)]
        self.ws: websocket.WebSocket | None = None

    def _connect(self) -> None:
        url = self.host.replace("http://", "ws://") + self.path
        started = time.perf_counter()
        try:
            self.ws = websocket.create_connection(
                url, origin=self.host, cookie=SESSION_COOKIE, timeout=30
            )
        except Exception as error:  # noqa: BLE001 - every failure is a counted error
            _record("connect", started, error)
            self.ws = None
            time.sleep(1)
            return
        _record("connect", started)
        try:
            hello = json.loads(self.ws.recv())
            if hello.get("type") != "hello":
                raise RuntimeError(f"first message was not hello: {hello}")
        except Exception as error:  # noqa: BLE001 - a close code 44xx lands here too
            _record("hello", started, error)
            self._drop()
            return
        _record("hello", started)
        self.ws.settimeout(1)  # short reads, so Locust can stop the user at the end

    def _drop(self) -> None:
        if self.ws is not None:
            try:
                self.ws.close()
            except Exception:  # noqa: BLE001, S110 - already broken
                pass
        self.ws = None
        time.sleep(1)

    @task
    def listen(self) -> None:
        if self.ws is None:
            self._connect()
            return
        try:
            raw = self.ws.recv()
        except websocket.WebSocketTimeoutException:
            return
        except Exception as error:  # noqa: BLE001 - a dropped socket is an error
            _record("dropped", time.perf_counter(), error)
            self._drop()
            return
        message = json.loads(raw)
        sent = message.get("probe_sent")
        if sent is not None:
            events.request.fire(
                request_type="WS",
                name="probe",
                response_time=max(0.0, (time.time() - sent) * 1000),
                response_length=len(raw),
                exception=None,
                context={},
            )
        else:
            events.request.fire(
                request_type="WS",
                name=f"event {message.get('type')}",
                response_time=0,
                response_length=len(raw),
                exception=None,
                context={},
            )

    def on_stop(self) -> None:
        if self.ws is not None:
            self.ws.close()


class ApiReader(HttpUser):
    fixed_count = RPS
    wait_time = constant_throughput(1)

    def on_start(self) -> None:
        self.client.headers["Authorization"] = f"Token {TOKEN}"

    def _get(self, path: str, name: str) -> None:
        self.client.get(path, name=name)

    @task(2)
    def clusters(self) -> None:
        self._get("/api/clusters/", "GET /api/clusters/")

    @task(2)
    def cluster(self) -> None:
        self._get(f"/api/clusters/{CLUSTER}/", "GET /api/clusters/<name>/")

    @task(2)
    def plans(self) -> None:
        self._get(f"/api/clusters/{CLUSTER}/plans/", "GET /api/clusters/<name>/plans/")

    @task(2)
    def plan(self) -> None:
        self._get(f"/api/plans/{PLAN_ID}/", "GET /api/plans/<id>/")

    @task(1)
    def moves(self) -> None:
        self._get(f"/api/plans/{PLAN_ID}/moves/", "GET /api/plans/<id>/moves/")

    @task(1)
    def broker_loads(self) -> None:
        self._get(
            f"/api/clusters/{CLUSTER}/loads/brokers/", "GET /api/clusters/<name>/loads/brokers/"
        )

    @task(1)
    def partition_loads(self) -> None:
        self._get(
            f"/api/clusters/{CLUSTER}/loads/partitions/",
            "GET /api/clusters/<name>/loads/partitions/",
        )
