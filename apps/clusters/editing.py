"""Adding, changing and removing a registered cluster: permission-checked, validated by
the model (nothing is stored when a value is refused) and audited — who, what,
old → new — with secrets redacted."""

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction

from apps.audit.services import audit_record
from apps.core.secret_fields import encrypted_is_set
from apps.kafka_layer.connection import REDACTED

from .actions import ClusterAction
from .models import Cluster
from .signals import cluster_removing

# Write-only: never rendered back, never audited in clear.
SECRET_FIELDS = ("sasl_password", "ssl_key_pem")
# What an audit event shows of a cluster (secrets as REDACTED or "").
AUDITED_FIELDS = (
    "name",
    "bootstrap_servers",
    "security_protocol",
    "sasl_mechanism",
    "sasl_username",
    "ssl_ca_pem",
    "ssl_certificate_pem",
    "ssl_verify_hostname",
)


def cluster_audited(*, cluster: Cluster) -> dict[str, Any]:
    """The cluster as an audit event shows it: secrets only say whether one is set."""
    values = {name: getattr(cluster, name) for name in AUDITED_FIELDS}
    for name in SECRET_FIELDS:
        values[name] = REDACTED if encrypted_is_set(cluster, name) else ""
    return values


class ClusterRemovalRefused(Exception):
    """Removing the cluster now would lose something; the message says what."""


def _permission_require(user: AbstractBaseUser, action: str, cluster: Cluster | None) -> None:
    """Adding a cluster takes the permission on every cluster; changing or removing
    one, on that cluster."""
    if not user.is_authenticated or not user.has_perm(f"clusters.{action}_cluster", cluster):
        raise PermissionDenied(f"you are not allowed to {action} clusters")


def cluster_save(
    *,
    actor: AbstractBaseUser,
    cluster: Cluster,
    secrets_changed: list[str] = (),
    client_address: str | None = None,
) -> Cluster:
    """Store a new or edited `cluster` (its secret fields hold the values to keep).

    Validates first (ValidationError, nothing stored); audits the fields that changed,
    a replaced secret as REDACTED on both sides.
    """
    adding = cluster.pk is None
    _permission_require(actor, "add" if adding else "change", None if adding else cluster)
    cluster.full_clean()
    with transaction.atomic():
        before = {} if adding else cluster_audited(cluster=Cluster.objects.get(pk=cluster.pk))
        cluster.save()
        after = cluster_audited(cluster=cluster)
        changed = [k for k in after if before.get(k) != after[k]] + [
            k for k in secrets_changed if before.get(k) == after[k]
        ]
        if adding or changed:
            audit_record(
                actor=actor,
                action=ClusterAction.CREATED if adding else ClusterAction.CHANGED,
                obj=cluster,
                before=None if adding else {k: before[k] for k in changed},
                after=after if adding else {k: after[k] for k in changed},
                client_address=client_address,
            )
    return cluster


def cluster_delete(
    *, actor: AbstractBaseUser, cluster: Cluster, client_address: str | None = None
) -> None:
    """Remove the cluster and what was synced, sampled and planned for it.

    The audit trail stays: events refer to objects by type and id, not by foreign key,
    and this removal is one more event, with the settings it had (secrets redacted).
    """
    _permission_require(actor, "delete", cluster)
    with transaction.atomic():
        # Raises ClusterRemovalRefused when another app says no.
        cluster_removing.send(sender=Cluster, cluster=cluster)
        audit_record(
            actor=actor,
            action=ClusterAction.DELETED,
            obj=cluster,
            before=cluster_audited(cluster=cluster),
            client_address=client_address,
        )
        cluster.delete()
