"""A grant: one role, to one user or one group, on one cluster or on all of them."""

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from django.db.models import Q

from .roles import Role


class GrantSource(models.TextChoices):
    MANUAL = "manual", "granted on the dashboard"
    OIDC = "oidc", "from the identity provider's claims"


class Grant(models.Model):
    role = models.CharField(max_length=16, choices=[(r.value, r.value) for r in Role])
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="grants",
    )
    group = models.ForeignKey(
        Group, null=True, blank=True, on_delete=models.CASCADE, related_name="grants"
    )
    # Empty: every cluster, those added later included.
    cluster = models.ForeignKey(
        "clusters.Cluster", null=True, blank=True, on_delete=models.CASCADE, related_name="grants"
    )
    source = models.CharField(max_length=8, choices=GrantSource.choices, default=GrantSource.MANUAL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["cluster__name", "role", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(user__isnull=False, group__isnull=True)
                | Q(user__isnull=True, group__isnull=False),
                name="grant_to_user_or_group",
            ),
        ]

    def __str__(self) -> str:
        holder = f"user {self.user}" if self.user_id else f"group {self.group}"
        where = self.cluster.name if self.cluster_id else "all clusters"
        return f"{self.role} on {where} to {holder}"
