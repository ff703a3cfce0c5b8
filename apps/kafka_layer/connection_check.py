"""Test connection: try a cluster's connection settings step by step and say which step
failed — DNS, TCP, TLS handshake, SASL authentication, authorization — with the error
the resolver, the socket or Kafka's client gave.

DNS and TCP are checked with plain sockets, address by address; TLS, SASL and the
authorization with the librdkafka client every sync uses, built from the same settings,
whose connection errors (error_cb) name the failing layer.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AclOperation, AdminClient

from .clients import client_config_build, client_timeouts
from .connection import ConnectionSettings

DNS, TCP, TLS, SASL, AUTHORIZATION = (
    "DNS",
    "TCP",
    "TLS handshake",
    "SASL authentication",
    "authorization",
)
STEPS = (DNS, TCP, TLS, SASL, AUTHORIZATION)

# What the balancer does on the cluster resource (see docs/security.md): read its
# state, move partitions and elect leaders, read and set throttles.
_CLUSTER_OPERATIONS = {
    AclOperation.DESCRIBE: "Describe (read brokers and log dirs)",
    AclOperation.ALTER: "Alter (move partitions, elect leaders)",
    AclOperation.DESCRIBE_CONFIGS: "DescribeConfigs (read throttles)",
    AclOperation.ALTER_CONFIGS: "AlterConfigs (set throttles)",
}


@dataclass(frozen=True)
class StepResult:
    step: str
    # True passed, False failed, None not tried (an earlier step failed) or not used.
    ok: bool | None
    detail: str = ""


@dataclass(frozen=True)
class ConnectionCheck:
    steps: list[StepResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(s.ok is not False for s in self.steps)

    @property
    def failed(self) -> StepResult | None:
        return next((s for s in self.steps if s.ok is False), None)


def _addresses(bootstrap_servers: str) -> list[tuple[str, int]]:
    pairs = []
    for part in bootstrap_servers.split(","):
        host, _, port = part.strip().rpartition(":")
        pairs.append((host.strip("[]"), int(port)))
    return pairs


def _dns(pairs: list[tuple[str, int]]) -> tuple[StepResult, list[tuple[str, int]]]:
    resolved, errors = [], []
    for host, port in pairs:
        try:
            socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            resolved.append((host, port))
        except OSError as exc:
            errors.append(f"{host}: {exc.strerror or exc}")
    # One answering address is enough for a client to bootstrap; the others are named.
    if not resolved:
        return StepResult(DNS, False, "; ".join(errors)), []
    return StepResult(DNS, True, "; ".join(f"{e} (skipped)" for e in errors)), resolved


def _tcp(pairs: list[tuple[str, int]], timeout: float) -> StepResult:
    opened, errors = 0, []
    for host, port in pairs:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            opened += 1
        except OSError as exc:
            errors.append(f"{host}:{port}: {exc.strerror or exc}")
    if not opened:
        return StepResult(TCP, False, "; ".join(errors))
    return StepResult(TCP, True, "; ".join(errors))


def _layer(error: KafkaError) -> str:
    """Which step a librdkafka connection error belongs to."""
    text = error.str()
    if error.code() == KafkaError._AUTHENTICATION or "SASL" in text:
        return SASL
    if error.code() == KafkaError._SSL or "SSL" in text:
        return TLS
    return TCP


def _kafka_steps(connection: ConnectionSettings, deadline: float) -> list[StepResult]:
    errors: list[KafkaError] = []
    # The errors come back through error_cb; librdkafka's own log of each retry is noise.
    config = client_config_build(
        connection=connection, extra={"error_cb": errors.append, "log_level": 2}
    )
    admin = AdminClient(config)
    tls = StepResult(TLS, None, "not used: no TLS") if not connection.uses_tls else None
    sasl = StepResult(SASL, None, "not used: no SASL") if not connection.uses_sasl else None

    metadata = None
    while metadata is None:
        try:
            metadata = admin.list_topics(timeout=1.0)
        except KafkaException as exc:
            admin.poll(0)  # serves error_cb
            failure = next((e for e in errors if _layer(e) != TCP), None)
            if failure is not None or time.monotonic() > deadline:
                failure = failure or (errors[-1] if errors else exc.args[0])
                layer = _layer(failure)
                results = [StepResult(layer, False, failure.str())]
                if layer == SASL and tls is None:  # SASL runs over an established TLS session
                    results.insert(0, StepResult(TLS, True))
                return results
    steps = [tls or StepResult(TLS, True), sasl or StepResult(SASL, True)]

    timeout = max(1.0, deadline - time.monotonic())
    try:
        description = admin.describe_cluster(
            include_authorized_operations=True, request_timeout=timeout
        ).result(timeout=timeout + 5)
    except KafkaException as exc:
        return [*steps, StepResult(AUTHORIZATION, False, exc.args[0].str())]
    granted = description.authorized_operations
    # None: the cluster has no authorizer, or does not say.
    missing = (
        []
        if granted is None
        else [
            text
            for op, text in _CLUSTER_OPERATIONS.items()
            if op not in granted and AclOperation.ALL not in granted
        ]
    )
    if missing:
        detail = "the principal lacks on the cluster resource: " + ", ".join(missing)
        return [*steps, StepResult(AUTHORIZATION, False, detail)]
    return [*steps, StepResult(AUTHORIZATION, True, f"{len(metadata.brokers)} brokers answered")]


def connection_check(*, connection: ConnectionSettings) -> ConnectionCheck:
    """Try `connection`; stop at the first failing step (the later ones are not tried)."""
    timeouts = client_timeouts()
    dns, resolved = _dns(_addresses(connection.bootstrap_servers))
    steps = [dns]
    if dns.ok:
        steps.append(_tcp(resolved, timeouts.connect))
    if steps[-1].ok:
        deadline = time.monotonic() + timeouts.connect + timeouts.request
        steps.extend(_kafka_steps(connection, deadline))
    # A later word on a step wins: TCP to the bootstrap list may pass, and the client's
    # connections to the brokers it advertises still fail.
    by_step = {s.step: s for s in steps}
    return ConnectionCheck(
        steps=[by_step.get(step, StepResult(step, None, "not tried")) for step in STEPS]
    )
