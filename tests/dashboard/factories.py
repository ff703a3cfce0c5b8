"""Builders shared by the dashboard, API and browser tests: a cluster model in a known
state, load windows and plans, all without Kafka."""

from datetime import datetime, timedelta

from devkit.users import user_make
from django.contrib.auth.models import User
from django.utils import timezone

from apps.clusters.models import Cluster
from apps.clusters.services import cluster_state_apply
from apps.kafka_layer.cluster_state import BrokerState, ClusterState, PartitionState, TopicState
from apps.metrics.models import BrokerLoad
from apps.metrics.services.topic_loads import topic_loads_store
from apps.plans.models import Plan
from apps.plans.services import plan_request

Key = tuple[str, int]

# 6 partitions of "orders" on brokers 1 and 2 only, and 2 of "audit-log" on 1 and 3:
# broker 3 is nearly empty, so a full rebalance has something to do.
SKEWED: dict[Key, list[int]] = {
    **{("orders", i): [1 + i % 2, 2 - i % 2] for i in range(6)},
    ("audit-log", 0): [1, 3],
    ("audit-log", 1): [3, 1],
}


def cluster_state(assignment: dict[Key, list[int]], alive=(1, 2, 3)) -> ClusterState:
    topics: dict[str, list[PartitionState]] = {}
    for (topic, index), replicas in sorted(assignment.items()):
        isr = [b for b in replicas if b in alive]
        topics.setdefault(topic, []).append(
            PartitionState(index=index, leader=isr[0] if isr else None, replicas=replicas, isr=isr)
        )
    return ClusterState(
        cluster_id="test-cluster",
        controller_id=100,
        brokers=[
            BrokerState(node_id=b, host="127.0.0.1", port=29090 + b, rack="abc"[(b - 1) % 3])
            for b in alive
        ],
        topics=[TopicState(name=t, internal=False, partitions=ps) for t, ps in topics.items()],
    )


def cluster_make(
    name: str = "prod", assignment: dict[Key, list[int]] | None = None, alive=(1, 2, 3)
) -> Cluster:
    cluster = Cluster.objects.create(name=name, bootstrap_servers="127.0.0.1:1")
    cluster_apply(cluster, assignment or SKEWED, alive=alive)
    return cluster


def cluster_apply(cluster: Cluster, assignment: dict[Key, list[int]], alive=(1, 2, 3)) -> None:
    # The model as a sync would leave it (brokers 1..3 were all seen once).
    if alive != (1, 2, 3) and not cluster.brokers.exists():
        cluster_state_apply(cluster=cluster, state=cluster_state(assignment), now=timezone.now())
    cluster_state_apply(
        cluster=cluster, state=cluster_state(assignment, alive=alive), now=timezone.now()
    )


def loads_make(
    cluster: Cluster,
    start: datetime,
    loads: dict[Key, tuple[float | None, float | None, float | None]],
    assignment: dict[Key, list[int]] | None = None,
    seconds: int = 60,
) -> None:
    """One window: (bytes_in, bytes_out, messages_in) per partition, and broker loads by
    the load model (bytes in on every replica, out plus replication on the leader).
    None: not measured in the window (the broker loads count it as zero, as the
    aggregation does)."""
    assignment = assignment or SKEWED
    end = start + timedelta(seconds=seconds)
    brokers: dict[int, dict[str, float]] = {}
    summaries = []
    led: dict[int, float] = {}  # messages in of the partitions each broker leads
    for (topic, index), (b_in, b_out, msgs) in loads.items():
        replicas = assignment[(topic, index)]
        summaries.append(
            {
                "topic": topic,
                "partition": index,
                "window_start": int(start.timestamp() * 1000),
                "window_end": int(end.timestamp() * 1000),
                "samples": 6,
                "leader": replicas[0],
                "replicas": replicas,
                "messages_in": msgs,
                "bytes_in": b_in,
                "bytes_out": b_out,
                "size": int((b_in or 0) * 3600),
                "avg_record_size": None,
                "consumer_groups": 0,
            }
        )
        led[replicas[0]] = led.get(replicas[0], 0.0) + (msgs or 0.0)
        b_in, b_out = b_in or 0.0, b_out or 0.0
        for position, b in enumerate(replicas):
            row = brokers.setdefault(b, {"in": 0.0, "out": 0.0, "disk": 0})
            row["in"] += b_in
            row["disk"] += int(b_in * 3600)
            if position == 0:
                row["out"] += b_out + b_in * (len(replicas) - 1)
    for b, row in brokers.items():
        BrokerLoad.objects.create(
            cluster=cluster,
            broker_id=b,
            window_start=start,
            window_end=end,
            network_in=row["in"],
            network_out=row["out"],
            disk=row["disk"],
            replicas=0,
            leaders=0,
            messages_in=led.get(b),
            # As the storage service flags it: no partition's rate in the window.
            measured=any(b_in is not None for b_in, _, _ in loads.values()),
        )
    # The partition loads, packed per topic, as the storage service writes them.
    topic_loads_store(cluster=cluster, loads=summaries)


def plan_make(cluster: Cluster, by: User | None = None, mode: str = "full") -> Plan:
    """A real proposal from the planner over the synced model (no Kafka involved)."""
    by = (
        by
        or User.objects.filter(username="plan-requester").first()
        or user_make("plan-requester", "admin")
    )
    return plan_request(cluster=cluster, user=by, mode=mode, reason="test")
