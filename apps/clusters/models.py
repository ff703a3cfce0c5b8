"""The Kafka clusters we manage, as last seen by the sync service."""

from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from apps.core.secret_fields import EncryptedTextField, ciphertext_reads
from apps.kafka_layer.connection import (
    PLAINTEXT,
    SASL_MECHANISMS,
    SECURITY_PROTOCOLS,
    ConnectionSettings,
)

from .validators import bootstrap_servers_normalize, connection_errors

# Names a cluster may not take: its page's URL is taken (dashboard /clusters/<name>/).
RESERVED_NAMES = frozenset({"new"})


class Cluster(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    bootstrap_servers = models.CharField(
        max_length=1000, help_text="Comma-separated host:port list."
    )
    # How to connect: apps.kafka_layer.connection translates these for every client.
    security_protocol = models.CharField(
        max_length=16,
        choices=[(p, p) for p in SECURITY_PROTOCOLS],
        default=PLAINTEXT,
    )
    sasl_mechanism = models.CharField(
        "SASL mechanism",
        max_length=16,
        choices=[(m, m) for m in SASL_MECHANISMS],
        blank=True,
        help_text="With SASL_PLAINTEXT or SASL_SSL.",
    )
    sasl_username = models.CharField("SASL username", max_length=255, blank=True)
    sasl_password = EncryptedTextField("SASL password", blank=True)
    ssl_ca_pem = models.TextField(
        "CA certificate (PEM)",
        blank=True,
        help_text="With SSL or SASL_SSL; empty trusts the system's CAs.",
    )
    ssl_certificate_pem = models.TextField(
        "client certificate (PEM)",
        blank=True,
        help_text="For mutual TLS: the client's certificate first, then any intermediates.",
    )
    ssl_key_pem = EncryptedTextField(
        "client private key (PEM)", blank=True, help_text="For mutual TLS, unencrypted."
    )
    ssl_verify_hostname = models.BooleanField(
        "verify broker hostnames",
        default=True,
        help_text="Check that each broker's certificate names the host we connect to.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    kafka_cluster_id = models.CharField(max_length=64, blank=True)
    # What DescribeCluster names; under KRaft that is any live broker, not the
    # quorum controller (clients cannot reach it), so pages do not show it.
    controller_id = models.IntegerField(null=True, blank=True)
    last_synced_at = models.DateTimeField(null=True, blank=True)
    last_sync_error = models.TextField(blank=True)
    last_sync_error_at = models.DateTimeField(null=True, blank=True)
    # Backoff while unreachable (apps.clusters.backoff): failed rounds in a row, and
    # no sync or sample before `next_sync_at`.
    sync_failures = models.PositiveIntegerField(default=0)
    next_sync_at = models.DateTimeField(null=True, blank=True)
    # Set by each sync: the Cluster ACLs the principal lacks (the reads still work).
    access_warning = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def reachable(self) -> bool:
        return not self.last_sync_error

    @property
    def connection(self) -> ConnectionSettings:
        return ConnectionSettings(
            bootstrap_servers=self.bootstrap_servers,
            security_protocol=self.security_protocol,
            sasl_mechanism=self.sasl_mechanism,
            sasl_username=self.sasl_username,
            sasl_password=self.sasl_password,
            ssl_ca_pem=self.ssl_ca_pem,
            ssl_certificate_pem=self.ssl_certificate_pem,
            ssl_key_pem=self.ssl_key_pem,
            ssl_verify_hostname=self.ssl_verify_hostname,
        )

    def refresh_from_db(self, *args: Any, **kwargs: Any) -> None:
        # Django copies each value with getattr(), which would decrypt the secrets.
        with ciphertext_reads():
            super().refresh_from_db(*args, **kwargs)

    def clean(self) -> None:
        self.bootstrap_servers = bootstrap_servers_normalize(self.bootstrap_servers)
        for name in ("ssl_ca_pem", "ssl_certificate_pem", "ssl_key_pem"):
            setattr(self, name, getattr(self, name).strip())
        errors = connection_errors(self.connection)
        if self.name in RESERVED_NAMES:
            # /clusters/new/ is the page that adds one.
            errors["name"] = [f'"{self.name}" is reserved; choose another name.']
        if errors:
            raise ValidationError(errors)


class ClusterRound(models.Model):
    """One kind of periodic round (sync, sample, aggregation, detection, canary) of one
    cluster: the lease that keeps a second one from starting while one runs, and what
    happened lately."""

    SYNC = "sync"
    SAMPLE = "sample"
    AGGREGATION = "aggregation"
    DETECTION = "detection"
    CANARY = "canary"
    KINDS = [
        (SYNC, SYNC),
        (SAMPLE, SAMPLE),
        (AGGREGATION, AGGREGATION),
        (DETECTION, DETECTION),
        (CANARY, CANARY),
    ]

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="rounds")
    kind = models.CharField(max_length=16, choices=KINDS)
    # Held while `lease_until` is in the future by the round holding `lease_token`.
    lease_token = models.CharField(max_length=32, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    # Rounds not started because the previous one still ran (overran its interval).
    skipped = models.PositiveIntegerField(default=0)
    last_skipped_at = models.DateTimeField(null=True, blank=True)
    # Why the last round failed; empty after a good one (one warning per change).
    last_error = models.TextField(blank=True)
    # What the last good round could not read (it went on without), e.g. replica sizes.
    last_degraded = models.TextField(blank=True)
    # When the last round that ran ended, and how long it took (monitoring reads them).
    last_finished_at = models.DateTimeField(null=True, blank=True)
    last_seconds = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["cluster", "kind"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "kind"], name="unique_cluster_round")
        ]

    def __str__(self) -> str:
        return f"{self.cluster_id}/{self.kind}"


class Broker(models.Model):
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="brokers")
    node_id = models.IntegerField()
    host = models.CharField(max_length=255, blank=True)
    port = models.IntegerField(null=True, blank=True)
    rack = models.CharField(max_length=255, blank=True, null=True)
    alive = models.BooleanField(default=True)
    first_seen = models.DateTimeField()
    # Empty while a broker is only known from replica lists and never answered.
    last_seen = models.DateTimeField(null=True, blank=True)
    # Capacities for the balancer (bytes/s and bytes); empty means unbounded.
    capacity_network_in = models.BigIntegerField(null=True, blank=True)
    capacity_network_out = models.BigIntegerField(null=True, blank=True)
    capacity_disk = models.BigIntegerField(null=True, blank=True)
    # As the last sync counted them, so pages need not read every partition.
    replicas_count = models.IntegerField(default=0, editable=False)
    leaders_count = models.IntegerField(default=0, editable=False)
    # Its log dirs (JBOD: several) as the last sync that could read them saw them, sorted
    # by path: [{"path", "total", "usable", "online", "used"}], bytes (total and usable
    # null where Kafka does not say: before DescribeLogDirs v4, or an offline dir).
    # Null: never read. Topic.replica_dirs points into this list.
    log_dirs = models.JSONField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["cluster", "node_id"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "node_id"], name="unique_broker_node")
        ]

    def __str__(self) -> str:
        return f"{self.cluster.name}/broker-{self.node_id}"


class Topic(models.Model):
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="topics")
    name = models.CharField(max_length=249)
    internal = models.BooleanField(default=False)
    # What the sync last wrote of its partitions (services.placement_digest); a topic
    # whose digest is unchanged is not read again. Empty: compare row by row.
    placement_digest = models.CharField(max_length=32, blank=True, editable=False)
    # Its partitions packed (apps.clusters.placement), written with the digest: the
    # snapshot and the sync's diff read this instead of every partition row. Only
    # trusted while the digest is set: another writer of partitions empties the digest.
    placement = models.BinaryField(default=b"", editable=False)
    # Which log dir holds each replica, aligned with `placement` (apps.clusters.replica_dirs):
    # an index into its broker's Broker.log_dirs, -1 unknown. Null: not known.
    replica_dirs = models.BinaryField(null=True, editable=False)
    # Its partitions as the sync counted them, so topic tables read no partition.
    partitions_count = models.IntegerField(default=0, editable=False)
    replication_factor = models.IntegerField(default=0, editable=False)
    offline_count = models.IntegerField(default=0, editable=False)
    under_replicated_count = models.IntegerField(default=0, editable=False)

    class Meta:
        ordering = ["cluster", "name"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="unique_topic_name")
        ]

    def __str__(self) -> str:
        return f"{self.cluster.name}/{self.name}"


class Partition(models.Model):
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="partitions")
    index = models.IntegerField()
    # Node ids; -1 / None means no leader (offline).
    leader = models.IntegerField(null=True, blank=True)
    # Ordered replica list: replicas[0] is the preferred leader.
    replicas = models.JSONField(default=list)
    isr = models.JSONField(default=list)
    offline = models.BooleanField(default=False)
    under_replicated = models.BooleanField(default=False)

    class Meta:
        ordering = ["topic", "index"]
        constraints = [
            models.UniqueConstraint(fields=["topic", "index"], name="unique_partition_index")
        ]

    def __str__(self) -> str:
        return f"{self.topic.name}-{self.index}"


class TopicPlacement(models.Model):
    """One topic's replicas and leaders per broker, as the last sync saw them: the
    heatmap's rows, kept by the sync for changed topics only, so a page reads one row
    per topic it shows instead of every partition."""

    topic = models.OneToOneField(Topic, on_delete=models.CASCADE, related_name="placement_counts")
    # Broker node id (a string: JSON keys) -> count; brokers with none are left out.
    replicas = models.JSONField(default=dict)
    leaders = models.JSONField(default=dict)
    replicas_total = models.IntegerField(default=0)
    leaders_total = models.IntegerField(default=0)

    def __str__(self) -> str:
        return f"placement of {self.topic_id}"
