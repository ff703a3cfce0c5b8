"""The secure profile (`dev-cluster up --secure`): SASL_SSL/SCRAM, mTLS and ACLs on.

A companion cluster beside the plain one: run dir `<run dir>-secure` (`.run/kafka-secure`),
broker base and controller port + 4. Broker N (P = KAFKA_DEV_BROKER_PORT_BASE + 4 + N)
listens on

- P:     PLAINTEXT, kept for the tool's metadata checks; its principal (ANONYMOUS) has
         no ACL, so it sees the brokers and nothing else;
- P + 3: SASL_SSL with SCRAM-SHA-512 (server certificate only);
- P + 9: SSL with a client certificate required (mTLS); the brokers talk to each other
         here, and to the controller (KAFKA_DEV_CONTROLLER_PORT + 4) over mTLS too.

The CA and certificates come from secure_pki, the SCRAM users are created when storage
is formatted (`--add-scram`), with random passwords kept in `<run_dir>/users.json`
(0600, never printed). KRaft's StandardAuthorizer is on; super users are the brokers
(`User:CN=broker`) and `admin` (SCRAM and `CN=admin`). The balancer's principals
(`User:balancer`, `User:CN=balancer`) get exactly secure_acls.balancer_acls;
`balancer-no-alter` (both ways) the same minus Alter on the cluster, and the certificate
`CN=nobody` nothing, for tests of the message a principal missing an ACL gets.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

from .cluster import UP_TIMEOUT_S, DevCluster
from .companions import _companion_args
from .leaders import ElectionResult
from .listeners import PROFILES
from .secure_acls import (
    CANARY_TOPIC_DEFAULT,
    METRICS_TOPIC_DEFAULT,
    acls_grant,
    balancer_acls,
    without,
)
from .secure_pki import BROKER_CN, ca_path, cert_path, key_path, keystore_path, pki_ensure
from .topology import HOST, NodeSpec

PROFILE = "secure"
PORT_OFFSET = 4
SASL_SSL_OFFSET = 3  # from the broker's PLAINTEXT port
MTLS_OFFSET = 9
SCRAM_MECHANISM = "SCRAM-SHA-512"
ADMIN_USER = "admin"
BALANCER_USER = "balancer"
NO_ALTER_USER = "balancer-no-alter"
NOBODY = "nobody"
SCRAM_USERS = (ADMIN_USER, BALANCER_USER, NO_ALTER_USER)
CLIENT_CERTS = (ADMIN_USER, BALANCER_USER, NO_ALTER_USER, NOBODY)
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def users_path(run_dir: Path) -> Path:
    return run_dir / "users.json"


def users_ensure(run_dir: Path) -> dict[str, str]:
    """The SCRAM users' passwords, made once per run dir (0600 from the start)."""
    path = users_path(run_dir)
    if not path.exists():
        run_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({u: secrets.token_urlsafe(24) for u in SCRAM_USERS}, fh)
    return json.loads(path.read_text())


class SecureProfile:
    name = PROFILE

    def prepare(self, run_dir: Path) -> None:
        users_ensure(run_dir)
        pki_ensure(run_dir, CLIENT_CERTS)

    def node_props(self, spec: NodeSpec, run_dir: Path) -> dict[str, str]:
        props = {
            "controller.listener.names": "CONTROLLER",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(keystore_path(run_dir)),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(ca_path(run_dir)),
            "ssl.endpoint.identification.algorithm": "https",
            "listener.name.controller.ssl.client.auth": "required",
            "authorizer.class.name": STANDARD_AUTHORIZER,
            "super.users": f"User:CN={BROKER_CN};User:{ADMIN_USER};User:CN={ADMIN_USER}",
        }
        if spec.role == "controller":
            props["listener.security.protocol.map"] = "CONTROLLER:SSL"
            props["listeners"] = f"CONTROLLER://{HOST}:{spec.port}"
            return props
        ports = {
            "PLAINTEXT": spec.port,
            "SASL_SSL": spec.port + SASL_SSL_OFFSET,
            "MTLS": spec.port + MTLS_OFFSET,
        }
        listeners = ",".join(f"{name}://{HOST}:{port}" for name, port in ports.items())
        props |= {
            "listener.security.protocol.map": (
                "CONTROLLER:SSL,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,MTLS:SSL"
            ),
            "listeners": listeners,
            "advertised.listeners": listeners,
            "inter.broker.listener.name": "MTLS",
            "listener.name.mtls.ssl.client.auth": "required",
            "sasl.enabled.mechanisms": SCRAM_MECHANISM,
            f"listener.name.sasl_ssl.{SCRAM_MECHANISM.lower()}.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"
            ),
        }
        return props

    def format_args(self, run_dir: Path) -> list[str]:
        args = []
        for user, password in users_ensure(run_dir).items():
            args += ["--add-scram", f"{SCRAM_MECHANISM}=[name={user},password={password}]"]
        return args


PROFILES[PROFILE] = SecureProfile()


def secure_cluster_args() -> dict[str, Any]:
    """DevCluster(**these): the secure profile, run dir `<run dir>-secure`, ports + 4."""
    return {**_companion_args(PROFILE, PORT_OFFSET), "profile": PROFILE}


class SecureDevCluster(DevCluster):
    """The secure companion cluster; `up` also grants the ACLs."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{**secure_cluster_args(), **kwargs})

    def bootstrap(self, listener: str) -> str:
        offset = {"PLAINTEXT": 0, "SASL_SSL": SASL_SSL_OFFSET, "MTLS": MTLS_OFFSET}[listener]
        return ",".join(f"{HOST}:{self.nodes[b].port + offset}" for b in self.broker_ids)

    @property
    def ca_path(self) -> Path:
        return ca_path(self.run_dir)

    def password(self, user: str) -> str:
        return json.loads(users_path(self.run_dir).read_text())[user]

    def client_settings(self, *, listener: str, principal: str = BALANCER_USER) -> dict[str, str]:
        """A Cluster's connection fields (name -> value) as `principal` on `listener`."""
        ca = self.ca_path.read_text()
        if listener == "SASL_SSL":
            return {
                "bootstrap_servers": self.bootstrap("SASL_SSL"),
                "security_protocol": "SASL_SSL",
                "sasl_mechanism": SCRAM_MECHANISM,
                "sasl_username": principal,
                "sasl_password": self.password(principal),
                "ssl_ca_pem": ca,
            }
        return {
            "bootstrap_servers": self.bootstrap("MTLS"),
            "security_protocol": "SSL",
            "ssl_ca_pem": ca,
            "ssl_certificate_pem": cert_path(self.run_dir, principal).read_text(),
            "ssl_key_pem": key_path(self.run_dir, principal).read_text(),
        }

    def admin_config(self) -> dict[str, Any]:
        """librdkafka settings of the super user (SCRAM over SASL_SSL)."""
        return {
            "bootstrap.servers": self.bootstrap("SASL_SSL"),
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": SCRAM_MECHANISM,
            "sasl.username": ADMIN_USER,
            "sasl.password": self.password(ADMIN_USER),
            "ssl.ca.location": str(self.ca_path),
        }

    def acls_ensure(self) -> None:
        acls = balancer_acls(
            os.environ.get("METRICS_TOPIC") or METRICS_TOPIC_DEFAULT,
            os.environ.get("CANARY_TOPIC") or CANARY_TOPIC_DEFAULT,
        )
        no_alter = without(acls, "ALTER", "CLUSTER")
        acls_grant(
            self.admin_config(),
            {
                f"User:{BALANCER_USER}": acls,
                f"User:CN={BALANCER_USER}": acls,
                f"User:{NO_ALTER_USER}": no_alter,
                f"User:CN={NO_ALTER_USER}": no_alter,
            },
        )

    def admin_security(self) -> dict[str, Any]:
        # The preferred-leader election after a start: ANONYMOUS on the PLAINTEXT
        # listener has no ACL and would see no topic, so it runs as the super user.
        return self.admin_config()

    def up(self, redis: bool = True, timeout: float = UP_TIMEOUT_S) -> ElectionResult | None:
        with self._lock():
            # A running cluster too: a client identity added since gets its certificate.
            self.profile.prepare(self.run_dir)
            election = super().up(redis=False, timeout=timeout)
            self.acls_ensure()
        if redis:
            self.redis_up()
        return election

    def settings_text(self) -> str:
        """What a person needs to register the cluster: addresses and paths, no secret."""
        return "\n".join(
            [
                f"CA certificate (PEM): {self.ca_path}",
                f"SASL_SSL, {SCRAM_MECHANISM}: bootstrap {self.bootstrap('SASL_SSL')}",
                f"  user {BALANCER_USER}, password: key {BALANCER_USER!r} of "
                f"{users_path(self.run_dir)}",
                f"mTLS (SSL, client certificate): bootstrap {self.bootstrap('MTLS')}",
                f"  certificate {cert_path(self.run_dir, BALANCER_USER)} "
                f"(User:CN={BALANCER_USER}), key {key_path(self.run_dir, BALANCER_USER)}",
                f"super user, not for the balancer: {ADMIN_USER} / CN={ADMIN_USER}",
            ]
        )
