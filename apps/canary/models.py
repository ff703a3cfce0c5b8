"""What the canary measured: per round, per broker leading a canary partition."""

from django.db import models

from apps.clusters.models import Cluster


class CanaryWindow(models.Model):
    """One canary round's figures for one broker: the records written to the partition
    it leads, how many were acknowledged by every in-sync replica (acks=all), read back,
    or failed, and the latencies' p50 and p99 in milliseconds (empty when none came)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="canary_windows")
    broker_id = models.IntegerField()
    at = models.DateTimeField()
    sent = models.IntegerField()
    acked = models.IntegerField()
    received = models.IntegerField()
    errors = models.IntegerField()
    produce_p50_ms = models.FloatField(null=True)
    produce_p99_ms = models.FloatField(null=True)
    end_to_end_p50_ms = models.FloatField(null=True)
    end_to_end_p99_ms = models.FloatField(null=True)
    last_error = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["cluster", "at", "broker_id"]
        indexes = [models.Index(fields=["cluster", "at"], name="canary_cluster_at")]

    def __str__(self) -> str:
        return f"{self.cluster_id}/broker-{self.broker_id} at {self.at:%H:%M:%S}"

    @property
    def availability(self) -> float:
        """The share of the round's writes that were acknowledged."""
        return self.acked / self.sent if self.sent else 0.0


class CanaryBand(models.Model):
    """Where a broker's canary latency is expected to be, and whether it is there.

    `baseline_ms` follows the broker's produce p99 while it is in its band (a moving
    average over CANARY_BASELINE_MINUTES), so a slow spell does not raise the band it
    is judged by; `outside` says the last rounds put the broker out of its band."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="canary_bands")
    broker_id = models.IntegerField()
    baseline_ms = models.FloatField(null=True)
    top_ms = models.FloatField()
    # rounds in a row the broker was suspected slow (> 0) or not (< 0): slowness.py
    slow_streak = models.IntegerField(default=0)
    # rounds that fed the baseline (band.py: a plain mean until it spans enough)
    fed = models.IntegerField(default=0)
    # rounds in a row above the top (or with nothing acknowledged)
    strikes = models.IntegerField(default=0)
    outside = models.BooleanField(default=False)
    changed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "broker_id"], name="canary_band_broker")
        ]

    def __str__(self) -> str:
        return f"{self.cluster_id}/broker-{self.broker_id} top {self.top_ms:.0f} ms"
