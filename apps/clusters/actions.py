"""The audit actions the clusters app records: a cluster registered, edited or removed."""

from enum import StrEnum


class ClusterAction(StrEnum):
    CREATED = "cluster.created"
    CHANGED = "cluster.changed"
    DELETED = "cluster.deleted"
