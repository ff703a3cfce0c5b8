"""What the planner sees of a cluster: the snapshot, cut to its policy's scope."""

import fnmatch
from dataclasses import dataclass

from django.conf import settings

from apps.balancer.engine import ClusterSnapshot
from apps.clusters.models import Cluster
from apps.metrics.selectors import cluster_snapshot_build

from ..models import ClusterPolicy
from .drains import drained_broker_ids


def policy_or_default(*, cluster: Cluster) -> ClusterPolicy:
    """The cluster's policy, or an unsaved one with the defaults: reading creates none."""
    return ClusterPolicy.objects.filter(cluster=cluster).first() or ClusterPolicy(cluster=cluster)


def topic_in_scope(*, policy: ClusterPolicy, topic: str) -> bool:
    include = policy.topics_include or []
    if include and not any(fnmatch.fnmatchcase(topic, pattern) for pattern in include):
        return False
    return not any(fnmatch.fnmatchcase(topic, pattern) for pattern in policy.topics_exclude or [])


@dataclass(frozen=True)
class ScopedSnapshot:
    """A planner snapshot of what the policy lets the balancer touch."""

    snapshot: ClusterSnapshot
    # Left out because no plan can place them (more replicas than usable brokers).
    unplaceable: list[str]


def snapshot_build(
    *, cluster: Cluster, policy: ClusterPolicy, draining: bool = False
) -> ScopedSnapshot:
    """The metrics app's snapshot (synced placement + latest loads), cut to the policy's scope.

    Left out: topics out of scope, excluded brokers (the policy's, and drained
    brokers: no plan places a replica on them) and every partition with a replica on
    one, and partitions with more replicas than alive brokers (e.g. RF 3 with one of
    three brokers down): the planner refuses a snapshot containing them, and nothing
    could heal them anyway.

    `draining`: the snapshot of a remove-brokers request. Drained brokers stay in it
    (the request drains them again, with whatever landed on them since), and the
    product's own metrics and canary topics are in scope whatever the policy says: their
    replicas follow a drain (drain_fit.py). Otherwise the canary topic is left out: it
    keeps a partition led by each broker, which balancing must not undo.
    """
    full = cluster_snapshot_build(cluster=cluster)
    excluded = set(policy.excluded_brokers or [])
    if not draining:
        excluded |= drained_broker_ids(cluster=cluster)
    own_topics = {settings.METRICS_TOPIC, settings.CANARY_TOPIC} if draining else set()
    canary = None if draining else settings.CANARY_TOPIC
    brokers = [b for b in full.brokers if b.id not in excluded]
    alive = sum(1 for b in brokers if b.alive)
    partitions, unplaceable = [], []
    # Judged once per topic, not per partition (8,000 topics, 200k partitions).
    in_scope: dict[str, bool] = {}
    for p in full.partitions:
        topic = p.topic
        scoped = in_scope.get(topic)
        if scoped is None:
            scoped = in_scope[topic] = topic in own_topics or (
                topic != canary and topic_in_scope(policy=policy, topic=topic)
            )
        if not scoped or not p.replicas:
            continue
        if excluded and not excluded.isdisjoint(p.replicas):
            continue
        if len(p.replicas) > alive and topic not in own_topics:
            unplaceable.append(f"{p.topic}-{p.partition}")
            continue
        partitions.append(p)
    snapshot = full.with_brokers(brokers).with_partitions(partitions)
    return ScopedSnapshot(snapshot=snapshot, unplaceable=unplaceable)
