"""The secured dev cluster profile (`dev-cluster up --secure`): SASL_SSL + mTLS + ACLs.

Beside the plain dev cluster, in its own run dir (`.run/kafka-secure`) and on its own
ports, one KRaft controller and three brokers with:

- a TLS CA made at the first `up` with Debian's openssl (`<run_dir>/pki/`), which signs a
  certificate for the brokers (SAN 127.0.0.1/localhost) and one per client principal;
- a SASL_SSL listener (SCRAM-SHA-512) on base+3+N and an mTLS listener (SSL, client
  certificate required) on base+6+N; brokers talk to each other (base+9+N) and to the
  controller (controller port + 1) over mTLS too, as `User:CN=broker`;
- ACLs on (KRaft's StandardAuthorizer). Super users: the brokers and `admin`. The
  balancer's principals (`User:balancer` over SCRAM, `User:CN=balancer` over mTLS) get
  exactly the ACLs in BALANCER_ACLS (docs/security.md explains each);
  `balancer-no-alter` (both ways) gets the same minus Alter on the cluster, and the
  certificate `CN=nobody` no ACL at all, to test the message a principal missing an
  ACL gets.

SCRAM passwords are random, made at the first `up` and kept in `<run_dir>/users.json`
(mode 0600), never printed. Only the standard library, openssl and (lazily) confluent_kafka.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dev_cluster import (
    BROKER_RACKS,
    CONTROLLER_ID,
    HOST,
    JVM_FLAGS,
    LOG4J2_CONFIG,
    REPO_ROOT,
    UP_TIMEOUT_S,
    DevCluster,
    DevClusterError,
    NodeSpec,
)

SCRAM_MECHANISM = "SCRAM-SHA-512"
ADMIN_USER = "admin"
BALANCER_USER = "balancer"
NO_ALTER_USER = "balancer-no-alter"
NOBODY = "nobody"  # a certificate of the CA without any ACL
SCRAM_USERS = (ADMIN_USER, BALANCER_USER, NO_ALTER_USER)
# Certificates: the brokers' own, and one per mTLS client principal (User:CN=<name>).
BROKER_CN = "broker"
CLIENT_CERTS = (ADMIN_USER, BALANCER_USER, NO_ALTER_USER, NOBODY)
CERT_DAYS = 30

# Offsets from KAFKA_DEV_BROKER_PORT_BASE (broker N of the plain cluster is base+N).
SASL_SSL_OFFSET = 3
MTLS_OFFSET = 6
INTERNAL_OFFSET = 9
CONTROLLER_OFFSET = 1  # from KAFKA_DEV_CONTROLLER_PORT

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
METRICS_TOPIC_DEFAULT = "__balancer_metrics"  # balancer_site.settings.METRICS_TOPIC


@dataclass(frozen=True)
class Acl:
    """One ALLOW ACL: operation on (resource type, name, pattern)."""

    operation: str  # confluent_kafka AclOperation name: DESCRIBE, ALTER, ...
    resource_type: str  # CLUSTER, TOPIC, GROUP
    name: str
    pattern: str = "LITERAL"  # LITERAL or PREFIXED
    why: str = ""


def balancer_acls(metrics_topic: str = METRICS_TOPIC_DEFAULT) -> list[Acl]:
    """Exactly what the balancer needs; docs/security.md carries the same table."""
    cluster = "kafka-cluster"
    return [
        Acl(
            "DESCRIBE",
            "CLUSTER",
            cluster,
            why="DescribeCluster, DescribeLogDirs, ListPartitionReassignments",
        ),
        Acl("ALTER", "CLUSTER", cluster, why="AlterPartitionReassignments, ElectLeaders"),
        Acl("DESCRIBE_CONFIGS", "CLUSTER", cluster, why="read broker throttle rates"),
        Acl("ALTER_CONFIGS", "CLUSTER", cluster, why="set/remove broker throttle rates"),
        Acl("DESCRIBE", "TOPIC", "*", why="metadata, partitions, offsets of every topic"),
        Acl("DESCRIBE_CONFIGS", "TOPIC", "*", why="read throttled replica lists"),
        Acl("ALTER_CONFIGS", "TOPIC", "*", why="set/remove throttled replica lists"),
        Acl("DESCRIBE", "GROUP", "*", why="list groups and their committed offsets (lag)"),
        Acl("CREATE", "TOPIC", metrics_topic, why="create the metrics topic"),
        Acl("WRITE", "TOPIC", metrics_topic, why="the sampler publishes samples"),
        Acl("READ", "TOPIC", metrics_topic, why="Spark's Kafka source reads samples"),
    ]


class SecureDevCluster(DevCluster):
    """The dev cluster with TLS, SCRAM and ACLs; same lifecycle API as DevCluster."""

    profile = "secure"

    def __init__(
        self,
        run_dir: str | os.PathLike[str] | None = None,
        redis_dir: str | os.PathLike[str] | None = None,
        redis_url: str | None = None,
        broker_port_base: int | None = None,
        controller_port: int | None = None,
        metrics_topic: str | None = None,
    ) -> None:
        env = os.environ
        run_dir = run_dir or env.get("KAFKA_DEV_SECURE_DIR") or REPO_ROOT / ".run" / "kafka-secure"
        super().__init__(run_dir, redis_dir, redis_url, broker_port_base, controller_port)
        base = broker_port_base or int(env.get("KAFKA_DEV_BROKER_PORT_BASE", 29090))
        self.metrics_topic = metrics_topic or env.get("METRICS_TOPIC") or METRICS_TOPIC_DEFAULT
        self.controller_port += CONTROLLER_OFFSET
        self.ports: dict[int, dict[str, int]] = {}
        self.nodes = {
            CONTROLLER_ID: NodeSpec(CONTROLLER_ID, "controller", self.controller_port, None)
        }
        for broker_id, rack in BROKER_RACKS.items():
            self.ports[broker_id] = {
                "SASL_SSL": base + SASL_SSL_OFFSET + broker_id,
                "MTLS": base + MTLS_OFFSET + broker_id,
                "INTERNAL": base + INTERNAL_OFFSET + broker_id,
            }
            port = self.ports[broker_id]["SASL_SSL"]
            self.nodes[broker_id] = NodeSpec(broker_id, "broker", port, rack)

    # ---- addresses and credentials

    def bootstrap(self, listener: str) -> str:
        return ",".join(f"{HOST}:{self.ports[b][listener]}" for b in self.broker_ids)

    @property
    def bootstrap_servers(self) -> str:
        return self.bootstrap("SASL_SSL")

    @property
    def pki_dir(self) -> Path:
        return self.run_dir / "pki"

    @property
    def ca_path(self) -> Path:
        return self.pki_dir / "ca.pem"

    def cert_path(self, name: str) -> Path:
        return self.pki_dir / f"{name}.pem"

    def key_path(self, name: str) -> Path:
        return self.pki_dir / f"{name}.key"

    @property
    def users_file(self) -> Path:
        return self.run_dir / "users.json"

    def password(self, user: str) -> str:
        return json.loads(self.users_file.read_text())[user]

    def client_settings(self, *, listener: str, principal: str = BALANCER_USER) -> dict[str, str]:
        """Connection settings for a Cluster (field name -> value) as `principal`."""
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
            "ssl_certificate_pem": self.cert_path(principal).read_text(),
            "ssl_key_pem": self.key_path(principal).read_text(),
        }

    def _librdkafka_admin_config(self) -> dict[str, object]:
        return {
            "bootstrap.servers": self.bootstrap("SASL_SSL"),
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": SCRAM_MECHANISM,
            "sasl.username": ADMIN_USER,
            "sasl.password": self.password(ADMIN_USER),
            "ssl.ca.location": str(self.ca_path),
        }

    # ---- one-time material: CA, certificates, SCRAM passwords

    def _openssl(self, *args: str) -> None:
        result = subprocess.run(
            ["openssl", *args], cwd=self.pki_dir, capture_output=True, text=True, check=False
        )
        if result.returncode != 0:
            raise DevClusterError(f"openssl {args[0]} failed: {result.stderr.strip()}")

    def _issue(self, name: str, *, server: bool) -> None:
        if self.cert_path(name).exists():
            return
        ext = self.pki_dir / f"{name}.ext"
        lines = ["basicConstraints=CA:FALSE", "keyUsage=digitalSignature,keyEncipherment"]
        lines.append(
            "extendedKeyUsage=serverAuth,clientAuth" if server else "extendedKeyUsage=clientAuth"
        )
        if server:
            lines.append("subjectAltName=IP:127.0.0.1,DNS:localhost")
        ext.write_text("\n".join(lines) + "\n")
        # An unencrypted PKCS#8 key: the form Kafka's PEM key store and every client read.
        self._openssl(
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            f"{name}.key",
            "-out",
            f"{name}.csr",
            "-subj",
            f"/CN={name}",
        )
        self._openssl(
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
        self.key_path(name).chmod(0o600)
        (self.pki_dir / f"{name}.csr").unlink()
        ext.unlink()
        # The brokers' PEM key store: key and certificate in one file.
        if server:
            bundle = self.pki_dir / f"{name}-keystore.pem"
            bundle.write_text(self.key_path(name).read_text() + self.cert_path(name).read_text())
            bundle.chmod(0o600)

    def pki_ensure(self) -> None:
        """The CA and the certificates, made once per run dir (kept across up/down)."""
        self.pki_dir.mkdir(parents=True, exist_ok=True)
        self.pki_dir.chmod(0o700)
        if not self.ca_path.exists():
            self._openssl(
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
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
            (self.pki_dir / "ca.key").chmod(0o600)
        self._issue(BROKER_CN, server=True)
        for name in CLIENT_CERTS:
            self._issue(name, server=False)

    def users_ensure(self) -> None:
        if self.users_file.exists():
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.users_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({u: secrets.token_urlsafe(24) for u in SCRAM_USERS}, fh)

    # ---- node configuration

    def _node_props(self, spec: NodeSpec) -> dict[str, str]:
        props = super()._node_props(spec)
        tls = {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(self.pki_dir / f"{BROKER_CN}-keystore.pem"),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(self.ca_path),
            "ssl.endpoint.identification.algorithm": "https",
        }
        props.update(tls)
        props["authorizer.class.name"] = STANDARD_AUTHORIZER
        props["super.users"] = f"User:CN={BROKER_CN};User:{ADMIN_USER};User:CN={ADMIN_USER}"
        props["listener.name.controller.ssl.client.auth"] = "required"
        if spec.role == "controller":
            props["listener.security.protocol.map"] = "CONTROLLER:SSL"
            props["listeners"] = f"CONTROLLER://{HOST}:{spec.port}"
            return props
        ports = self.ports[spec.node_id]
        props["listener.security.protocol.map"] = (
            "CONTROLLER:SSL,INTERNAL:SSL,SASL_SSL:SASL_SSL,MTLS:SSL"
        )
        listeners = ",".join(f"{name}://{HOST}:{ports[name]}" for name in ports)
        props["listeners"] = props["advertised.listeners"] = listeners
        props["inter.broker.listener.name"] = "INTERNAL"
        props["listener.name.internal.ssl.client.auth"] = "required"
        props["listener.name.mtls.ssl.client.auth"] = "required"
        props["sasl.enabled.mechanisms"] = SCRAM_MECHANISM
        props[f"listener.name.sasl_ssl.{SCRAM_MECHANISM.lower()}.sasl.jaas.config"] = (
            "org.apache.kafka.common.security.scram.ScramLoginModule required;"
        )
        return props

    def _format(self, node_ids: Iterable[int], java: str) -> None:
        """Like DevCluster._format, plus the SCRAM users in the bootstrap metadata."""
        todo = [n for n in node_ids if not (self.node_dir(n) / "data" / "meta.properties").exists()]
        if not todo:
            return
        cluster_id = self._cluster_id()
        users = json.loads(self.users_file.read_text())
        scram = []
        for user, password in users.items():
            scram += ["--add-scram", f"{SCRAM_MECHANISM}=[name={user},password={password}]"]
        for node_id in todo:
            cmd = [
                java,
                "-Xmx128m",
                *JVM_FLAGS,
                f"-Dlog4j2.configurationFile={LOG4J2_CONFIG}",
                "-cp",
                self._classpath(),
                "kafka.tools.StorageTool",
                "format",
                "--config",
                str(self._config_file(node_id)),
                f"--cluster-id={cluster_id}",
                "--ignore-formatted",
                *scram,
            ]
            result = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
                check=False,
                timeout=120,
            )
            if result.returncode != 0:
                # The output never echoes the passwords (they are only in argv).
                raise DevClusterError(
                    f"formatting storage of node {node_id} failed:\n{result.stdout}{result.stderr}"
                )

    def _start_nodes(self, node_ids: list[int]) -> None:
        if node_ids:
            self.users_ensure()
            self.pki_ensure()
        super()._start_nodes(node_ids)

    # ---- metadata checks and ACLs, as the admin

    def metadata_brokers(self, timeout: float = 3.0) -> set[int] | None:
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        if not self.users_file.exists():
            return None
        admin = AdminClient(
            {
                **self._librdkafka_admin_config(),
                "socket.connection.setup.timeout.ms": 2000,
                "log_level": 0,
                "error_cb": lambda _err: None,
            }
        )
        try:
            return set(admin.list_topics(timeout=timeout).brokers)
        except KafkaException:
            return None

    def acls_ensure(self, timeout: float = 30.0) -> None:
        """Grant BALANCER_ACLS to the balancer's principals (idempotent)."""
        from confluent_kafka.admin import (
            AclBinding,
            AclOperation,
            AclPermissionType,
            AdminClient,
            ResourcePatternType,
            ResourceType,
        )

        admin = AdminClient({**self._librdkafka_admin_config(), "log_level": 0})
        bindings = []
        grants = {
            f"User:{BALANCER_USER}": balancer_acls(self.metrics_topic),
            f"User:CN={BALANCER_USER}": balancer_acls(self.metrics_topic),
        }
        no_alter = [
            a
            for a in balancer_acls(self.metrics_topic)
            if (a.operation, a.resource_type) != ("ALTER", "CLUSTER")
        ]
        grants[f"User:{NO_ALTER_USER}"] = grants[f"User:CN={NO_ALTER_USER}"] = no_alter
        for principal, acls in grants.items():
            for acl in acls:
                bindings.append(
                    AclBinding(
                        # confluent-kafka calls the cluster resource BROKER.
                        ResourceType[acl.resource_type.replace("CLUSTER", "BROKER")],
                        acl.name,
                        ResourcePatternType[acl.pattern],
                        principal,
                        "*",
                        AclOperation[acl.operation],
                        AclPermissionType.ALLOW,
                    )
                )
        deadline = time.monotonic() + timeout
        while True:
            try:
                for future in admin.create_acls(bindings, request_timeout=10).values():
                    future.result()
                return
            except Exception as exc:  # e.g. the authorizer not loaded yet right after start
                if time.monotonic() > deadline:
                    raise DevClusterError(f"creating the balancer's ACLs failed: {exc}") from exc
                time.sleep(0.5)

    def up(self, redis: bool = True, timeout: float = UP_TIMEOUT_S) -> None:
        with self._lock():
            # Also for a running cluster: an identity added to this file since gets made.
            self.users_ensure()
            self.pki_ensure()
            super().up(redis=False, timeout=timeout)
            self.acls_ensure()
        if redis:
            self.redis_up()

    def settings_text(self) -> str:
        """What a person needs to register the cluster (paths, never secrets)."""
        return "\n".join(
            [
                f"CA certificate (PEM): {self.ca_path}",
                f"SASL_SSL ({SCRAM_MECHANISM}): bootstrap {self.bootstrap('SASL_SSL')}",
                f"  user {BALANCER_USER}; password: key {BALANCER_USER!r} in {self.users_file}",
                f"mTLS (SSL, client certificate): bootstrap {self.bootstrap('MTLS')}",
                f"  certificate {self.cert_path(BALANCER_USER)} (User:CN={BALANCER_USER}),"
                f" key {self.key_path(BALANCER_USER)}",
                f"super user (do not register it): {ADMIN_USER}, CN={ADMIN_USER}",
            ]
        )
