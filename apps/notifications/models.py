"""Notification channels of a cluster, and the deliveries made to them with the log
of every attempt.

A channel's URL is kept encrypted whatever its kind (apps.core.secrets, under
BALANCER_SECRET_KEYS): a Slack URL's path is its token, and a generic webhook's may
carry one too. Pages, the admin list and logs show only its host (`url_host`).
"""

from urllib.parse import urlsplit

from django.db import models
from django.utils import timezone

from apps.clusters.models import Cluster
from apps.core.secret_fields import EncryptedTextField
from apps.core.secrets import SecretDecryptError


class EventKind(models.TextChoices):
    BROKER_DEAD = "broker.dead", "broker dead"
    BROKER_BACK = "broker.back", "broker back"
    CLUSTER_UNREACHABLE = "cluster.unreachable", "cluster unreachable"
    CLUSTER_BACK = "cluster.back", "cluster reachable again"
    CANARY_SLOW = "canary.slow", "broker's canary latency out of its band"
    CANARY_BACK = "canary.back", "broker's canary latency back in its band"
    PLAN_PROPOSED = "plan.proposed", "plan proposed"
    PLAN_APPROVED = "plan.approved", "plan approved"
    PLAN_REJECTED = "plan.rejected", "plan rejected"
    EXECUTION_STARTED = "execution.started", "execution started"
    EXECUTION_COMPLETED = "execution.completed", "execution completed"
    EXECUTION_FAILED = "execution.failed", "execution failed"
    EXECUTION_CANCELLED = "execution.cancelled", "execution cancelled"
    EXECUTION_PAUSED = "execution.paused", "execution paused"
    EXECUTION_RESUMED = "execution.resumed", "execution resumed"
    EXECUTION_TUNED = "execution.tuned", "execution throttle or move caps changed"
    # Sent only by the "send test" button; no channel subscribes to it.
    TEST = "test", "test"


SUBSCRIBABLE_EVENTS = [k for k in EventKind if k != EventKind.TEST]


class ChannelKind(models.TextChoices):
    WEBHOOK = "webhook", "JSON webhook (HMAC-signed)"
    SLACK = "slack", "Slack-compatible incoming webhook"


class NotificationChannel(models.Model):
    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="notification_channels"
    )
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=16, choices=ChannelKind.choices)
    url = EncryptedTextField(help_text="Where to POST. Stored encrypted; shown by host only.")
    # HMAC-SHA256 key of a JSON webhook; unused by Slack channels.
    secret = EncryptedTextField(blank=True)
    all_events = models.BooleanField(default=True, help_text="Every event, now and future.")
    # The event kinds wanted when all_events is off.
    events = models.JSONField(default=list, blank=True)
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["cluster", "name"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="unique_channel_name")
        ]
        permissions = [("test_notificationchannel", "Can send a test notification")]

    def __str__(self) -> str:
        return f"{self.cluster.name}/{self.name}"

    @property
    def url_host(self) -> str:
        try:
            parts = urlsplit(self.url)
        except SecretDecryptError:
            return "(URL unreadable: key missing)"
        return parts.hostname or "(no URL)"

    def wants(self, event: str) -> bool:
        return self.enabled and (self.all_events or event in self.events)


class DeliveryState(models.TextChoices):
    PENDING = "pending"
    RETRYING = "retrying"
    DELIVERED = "delivered"
    FAILED = "failed"


class Delivery(models.Model):
    """One event for one channel, created in the transaction that made the event."""

    channel = models.ForeignKey(
        NotificationChannel, on_delete=models.CASCADE, related_name="deliveries"
    )
    event = models.CharField(max_length=32, choices=EventKind.choices, db_index=True)
    # The JSON body a webhook receives (a Slack channel gets its summary line).
    payload = models.JSONField()
    state = models.CharField(
        max_length=16, choices=DeliveryState.choices, default=DeliveryState.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    next_retry_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "deliveries"

    def __str__(self) -> str:
        return f"{self.event} to {self.channel} ({self.state})"


class AttemptOutcome(models.TextChoices):
    DELIVERED = "delivered"
    WILL_RETRY = "will_retry", "will retry"
    GAVE_UP = "gave_up", "gave up"


class DeliveryAttempt(models.Model):
    """The delivery log: one row per POST."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="log")
    number = models.PositiveIntegerField()
    at = models.DateTimeField(default=timezone.now)
    outcome = models.CharField(max_length=16, choices=AttemptOutcome.choices)
    status_code = models.PositiveIntegerField(null=True, blank=True)
    # What went wrong, with the channel's URL path and secret redacted.
    error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    next_retry_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [
            models.UniqueConstraint(fields=["delivery", "number"], name="unique_attempt_number")
        ]

    def __str__(self) -> str:
        return f"attempt {self.number} of delivery {self.delivery_id}: {self.outcome}"
