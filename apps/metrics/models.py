"""Measured traffic per window, the aggregation runs that produced it, and their cursor.

Loads are per second averaged over one window (BALANCING.md §1); sizes in bytes.
A null rate means it could not be measured in that window (fewer than two
samples, or no record size known); readers treat it as zero.
"""

from django.db import models

from apps.clusters.models import Cluster


class BrokerLoad(models.Model):
    """A broker's load by the load model of BALANCING.md §3, as currently placed."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="broker_loads")
    broker_id = models.IntegerField(help_text="Kafka node id.")
    window_start = models.DateTimeField()
    window_end = models.DateTimeField()
    network_in = models.FloatField()
    network_out = models.FloatField()
    disk = models.BigIntegerField()
    replicas = models.IntegerField()
    leaders = models.IntegerField()
    # Messages in of the partitions it leads (null: it led none in the window), so the
    # traffic chart outlives the partition rows of a window (retention keeps fewer).
    messages_in = models.FloatField(null=True, blank=True)
    # False: no partition's rate could be measured in the window (its first, with one
    # sample), so the totals are sums of nothing; the charts show a gap, not a zero.
    measured = models.BooleanField(default=True)

    class Meta:
        ordering = ["cluster", "-window_start", "broker_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "window_start", "broker_id"], name="unique_broker_load_window"
            )
        ]

    def __str__(self) -> str:
        return f"broker-{self.broker_id}@{self.window_start:%H:%M}"


class AggregationRun(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="aggregation_runs")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    spark_master = models.CharField(max_length=255, blank=True)
    input_rows = models.BigIntegerField(default=0)
    output_rows = models.BigIntegerField(default=0, help_text="Partition loads written.")
    broker_rows = models.IntegerField(default=0)
    malformed_rows = models.BigIntegerField(default=0)
    late_rows = models.BigIntegerField(default=0)
    windows = models.JSONField(default=list, help_text="Window starts written (ISO).")
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at"]
        constraints = [
            # The lock: at most one running aggregation per cluster.
            models.UniqueConstraint(
                fields=["cluster"],
                condition=models.Q(status="running"),
                name="one_running_aggregation_per_cluster",
            )
        ]

    def __str__(self) -> str:
        return f"{self.cluster.name} run {self.pk} ({self.status})"


class MetricsCursor(models.Model):
    """Where the next aggregation of a cluster starts reading the metrics topic."""

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, related_name="metrics_cursor")
    topic = models.CharField(max_length=249)
    # Metrics-topic partition (as a string) -> next offset to read.
    offsets = models.JSONField(default=dict)
    # Every window ending at or before this is written; later records for it are late.
    finalized_until = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.cluster.name} cursor"


class TopicLoad(models.Model):
    """One topic's loads in one window: its partitions' loads packed into one value
    (apps/metrics/window_packing.py; a row per partition made a 200k-partition window
    cost seconds to store), and its traffic in total and per broker by the load model
    of BALANCING.md §3 on the window's own placement (the heatmap's traffic rows)."""

    # No index or foreign key constraint of its own (8,000 rows a window, each checked
    # per row at commit on PostgreSQL): the unique constraint's index starts with the
    # cluster; the rows still go with their cluster (Django's cascade).
    cluster = models.ForeignKey(
        Cluster,
        on_delete=models.CASCADE,
        related_name="topic_loads",
        db_index=False,
        db_constraint=False,
    )
    topic = models.CharField(max_length=249)
    window_start = models.DateTimeField()
    window_end = models.DateTimeField()
    network_in = models.FloatField()
    network_out = models.FloatField()
    # Before the packed values: SQLite reads a row's columns in order, through the
    # overflow pages of a large value before the one asked for (a page's count).
    partition_count = models.IntegerField(default=0)
    # Bytes/s in and out per broker node id, packed (window_packing.brokers_pack).
    brokers = models.BinaryField(default=b"")
    # The topic's partition loads of the window, packed (window_packing.loads_pack).
    partitions = models.BinaryField(default=b"")

    class Meta:
        ordering = ["cluster", "-window_start", "topic"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "window_start", "topic"], name="unique_topic_load_window"
            )
        ]

    def __str__(self) -> str:
        return f"{self.topic}@{self.window_start:%H:%M}"
