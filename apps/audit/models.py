"""Append-only audit trail.

An event is written once and never changed: the model, its manager and its
queryset refuse updates and deletes, and the admin is read-only. Actors are
stored as text (plus the user id when there is one) rather than a foreign key,
so deleting a user neither cascades into nor rewrites the trail.
"""

from django.db import models
from django.utils import timezone


class AuditEventImmutable(Exception):
    """Someone tried to change or delete an audit event."""


class AuditEventQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AuditEventImmutable("audit events are append-only: update refused")

    def delete(self):
        raise AuditEventImmutable("audit events are append-only: delete refused")

    def bulk_update(self, objs, fields, batch_size=None):
        raise AuditEventImmutable("audit events are append-only: update refused")

    def update_or_create(self, defaults=None, create_defaults=None, **kwargs):
        raise AuditEventImmutable("audit events are append-only: update refused")


class ActorKind(models.TextChoices):
    USER = "user", "user"
    POLICY = "policy", "policy"
    SYSTEM = "system", "system"
    ANONYMOUS = "anonymous", "anonymous"


class AuditEvent(models.Model):
    created_at = models.DateTimeField(default=timezone.now, db_index=True, editable=False)
    actor_kind = models.CharField(max_length=16, choices=ActorKind.choices, editable=False)
    # Username, policy name ("policy:demo") or subsystem name; kept after the user is gone.
    actor = models.CharField(max_length=255, editable=False)
    actor_user_id = models.IntegerField(null=True, blank=True, editable=False)
    action = models.CharField(max_length=100, db_index=True, editable=False)
    object_type = models.CharField(max_length=100, blank=True, db_index=True, editable=False)
    object_id = models.CharField(max_length=100, blank=True, editable=False)
    object_repr = models.CharField(max_length=255, blank=True, editable=False)
    before = models.JSONField(null=True, blank=True, editable=False)
    after = models.JSONField(null=True, blank=True, editable=False)
    reason = models.TextField(blank=True, editable=False)
    client_address = models.GenericIPAddressField(null=True, blank=True, editable=False)
    # The cluster the event is about (a plain id: the trail outlives clusters). Empty for
    # events about no cluster (accounts, sign-ins, grants on all clusters): only those
    # who see every cluster read them.
    cluster_id = models.IntegerField(null=True, blank=True, db_index=True, editable=False)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["object_type", "object_id"], name="audit_object_idx")]
        permissions = [("export_auditevent", "Can export audit events")]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M:%S} {self.actor} {self.action} {self.object_repr}"

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise AuditEventImmutable("audit events are append-only: update refused")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AuditEventImmutable("audit events are append-only: delete refused")


class SigninFailureWindow(models.Model):
    """Failed sign-ins for one username in one fixed window: a counter, not the trail.

    Unlike the audit trail it is updated in place; a closed window is summarised into
    the trail (apps/audit/signin.py) and then dropped.
    """

    username = models.CharField(max_length=150)
    window_start = models.DateTimeField()
    failures = models.PositiveIntegerField(default=0)
    last_failure_at = models.DateTimeField()
    last_address = models.GenericIPAddressField(null=True, blank=True)
    # When this window brought the name's failures to the per-username limit (audited once).
    throttled_at = models.DateTimeField(null=True, blank=True)
    # Summarised into the trail; kept while the per-username throttle still counts it.
    audited = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["username", "window_start"], name="signin_failure_window_unique"
            )
        ]
        indexes = [models.Index(fields=["window_start"], name="signin_failure_window_idx")]

    def __str__(self) -> str:
        return f"{self.username} {self.window_start:%Y-%m-%d %H:%M} x{self.failures}"
