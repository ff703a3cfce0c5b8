"""A fingerprint of what a cluster's page shows from the model and the metrics, so
live pages and caches know whether anything changed without rebuilding it."""

from __future__ import annotations

import hashlib

from apps.clusters.models import Cluster, ClusterRound

from ..models import TopicLoad


def cluster_state_stamp(*, cluster_id: int) -> dict[str, str]:
    """{"model": a digest of the synced model (cluster row, rounds, brokers and each
    topic's placement digest and counts), "window": the newest traffic window's end}.
    Reads one short row per topic and broker, never a partition: the sync keeps
    each topic's placement digest (clusters.services.placement_digest)."""
    h = hashlib.blake2b(digest_size=12)
    row = (
        Cluster.objects.filter(pk=cluster_id)
        .values_list(
            "kafka_cluster_id",
            "last_sync_error",
            "access_warning",
            "sync_failures",
            "next_sync_at",
        )
        .first()
    )
    h.update(repr(row).encode())
    for values in (
        ClusterRound.objects.filter(cluster_id=cluster_id)
        .values_list("kind", "last_error", "last_degraded", "skipped")
        .order_by("kind")
    ):
        h.update(repr(values).encode())
    cluster = Cluster(pk=cluster_id)
    for values in cluster.brokers.values_list(
        "node_id", "alive", "host", "port", "rack", "replicas_count", "leaders_count"
    ).order_by("node_id"):
        h.update(repr(values).encode())
    for values in cluster.topics.values_list(
        "name",
        "internal",
        "placement_digest",
        "partitions_count",
        "offline_count",
        "under_replicated_count",
    ).order_by("name"):
        h.update(repr(values).encode())
    window = (
        TopicLoad.objects.filter(cluster_id=cluster_id)
        .order_by("-window_start")
        .values_list("window_end", flat=True)
        .first()
    )
    return {"model": h.hexdigest(), "window": window.isoformat() if window else ""}
