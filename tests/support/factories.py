"""The builders every test uses, all without Kafka: a cluster model in a known state
(from an assignment), load windows, plans (one of them from an assignment), and the
planning engine's snapshots with an independent re-implementation of the load model
(BALANCING.md §3) to check the engine's plans against."""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import UTC, datetime, timedelta

from devkit.partition_loads import partition_load_write
from devkit.users import user_make
from django.contrib.auth.models import User
from django.utils import timezone

from apps.access.models import Grant
from apps.access.roles import Role
from apps.clusters.models import Broker, Cluster, Partition, Topic
from apps.clusters.services import cluster_state_apply
from apps.kafka_layer.cluster_state import BrokerState, ClusterState, PartitionState, TopicState
from apps.metrics.models import BrokerLoad
from apps.metrics.services.topic_loads import topic_loads_store
from apps.plans.models import Plan, PlanMode, PlanOrigin
from apps.plans.services import plan_create, plan_request, policy_get, policy_update

Key = tuple[str, int]

# 6 partitions of "orders" on brokers 1 and 2 only, and 2 of "audit-log" on 1 and 3:
# broker 3 is nearly empty, so a full rebalance has something to do.
SKEWED: dict[Key, list[int]] = {
    **{("orders", i): [1 + i % 2, 2 - i % 2] for i in range(6)},
    ("audit-log", 0): [1, 3],
    ("audit-log", 1): [3, 1],
}


def cluster_state(
    assignment: dict[Key, list[int]], alive=(1, 2, 3), isr: dict[Key, list[int]] | None = None
) -> ClusterState:
    """What a sync would read: `assignment`'s partitions, the `alive` brokers (racks a to f
    by id, then a again), in-sync replicas the alive ones unless `isr` says otherwise, each
    led by its first in-sync replica."""
    topics: dict[str, list[PartitionState]] = {}
    for (topic, index), replicas in sorted(assignment.items()):
        in_sync = (isr or {}).get((topic, index), [b for b in replicas if b in alive])
        leader = next((b for b in replicas if b in in_sync), None)
        topics.setdefault(topic, []).append(
            PartitionState(index=index, leader=leader, replicas=replicas, isr=in_sync)
        )
    return ClusterState(
        cluster_id="test-cluster",
        controller_id=100,
        brokers=[
            BrokerState(node_id=b, host="127.0.0.1", port=29090 + b, rack="abcdef"[(b - 1) % 6])
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


def cluster_apply(
    cluster: Cluster,
    assignment: dict[Key, list[int]],
    alive=(1, 2, 3),
    now: datetime | None = None,
    isr: dict[Key, list[int]] | None = None,
) -> None:
    """The model as a sync of that state would leave it (on a new cluster, brokers 1..3
    were all seen once before)."""
    now = now or timezone.now()
    if alive != (1, 2, 3) and not cluster.brokers.exists():
        cluster_state_apply(cluster=cluster, state=cluster_state(assignment), now=now)
    cluster_state_apply(cluster=cluster, state=cluster_state(assignment, alive, isr), now=now)


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


def policy_set(cluster: Cluster, actor, **changes) -> None:
    """The cluster's balancer policy changed by `actor` (audited, as in the admin)."""
    policy_update(policy=policy_get(cluster=cluster), actor=actor, changes=changes)


def plan_from_assignment(
    cluster: Cluster,
    after: dict[Key, list[int]],
    before: dict[Key, list[int]],
    *,
    actor,
    origin: str = PlanOrigin.OPERATOR,
    mode: str = PlanMode.FULL,
    report: dict | None = None,
    **fields,
) -> Plan:
    """A plan (through plan_create, as the planner's proposals are stored) that moves
    each partition of `after` from its replicas in `before` to those in `after`."""
    return plan_create(
        cluster=cluster,
        origin=origin,
        mode=mode,
        reassignment={
            "version": 1,
            "partitions": [
                {"topic": t, "partition": p, "replicas": r} for (t, p), r in after.items()
            ],
        },
        assignment_before=before,
        report={} if report is None else report,
        actor=actor,
        **fields,
    )


def plan_row_make(cluster: Cluster, **fields) -> Plan:
    """A plan row as the detector would store one (a self-healing proposal), fields
    overridden by `fields`; no planner involved."""
    values = {
        "origin": PlanOrigin.DETECTOR,
        "mode": PlanMode.FIX_OFFLINE,
        "trigger": "broker 3 dead for 61 s",
        "fingerprint": "f" * 64,
        "reassignment": {"version": 1, "partitions": [{"topic": "orders", "partition": 0}]},
        "rollback_reassignment": {"version": 1, "partitions": []},
        "bytes_to_move": 3 * 1024**3 // 2,
    }
    return Plan.objects.create(cluster=cluster, **(values | fields))


# --- hand-made models and windows (metrics) ---------------------------------------------

T0 = datetime(2026, 11, 22, 4, 0, tzinfo=UTC)


def cluster_with_dead_broker_make(
    *, name: str = "demo", bootstrap_servers: str = "127.0.0.1:1"
) -> Cluster:
    """The "demo" model by hand: brokers 1 (rack a, capacities) and 2 (rack b, disk),
    broker 3 dead; orders-0 under-replicated, orders-1 offline, billing-0 fine."""
    cluster = Cluster.objects.create(name=name, bootstrap_servers=bootstrap_servers)
    now = timezone.now()
    Broker.objects.create(
        cluster=cluster,
        node_id=1,
        rack="a",
        first_seen=now,
        last_seen=now,
        capacity_network_in=125_000_000,
        capacity_network_out=125_000_000,
        capacity_disk=500_000_000_000,
    )
    Broker.objects.create(
        cluster=cluster,
        node_id=2,
        rack="b",
        first_seen=now,
        last_seen=now,
        capacity_disk=250_000_000_000,
    )
    Broker.objects.create(cluster=cluster, node_id=3, rack=None, alive=False, first_seen=now)
    orders = Topic.objects.create(cluster=cluster, name="orders")
    Partition.objects.create(topic=orders, index=0, leader=1, replicas=[1, 2, 3], isr=[1, 2])
    Partition.objects.create(
        topic=orders, index=1, leader=None, replicas=[3, 1], isr=[], offline=True
    )
    billing = Topic.objects.create(cluster=cluster, name="billing")
    Partition.objects.create(topic=billing, index=0, leader=2, replicas=[2, 1], isr=[2, 1])
    return cluster


def partition_load_create(
    *, cluster: Cluster, topic: str, partition: int, window: int, **loads
) -> None:
    """One partition's load in window `window` (minutes after T0), stored packed."""
    partition_load_write(
        cluster=cluster,
        topic=topic,
        partition=partition,
        window_start=T0 + timedelta(minutes=window),
        **{"leader": 1, "replicas": [1, 2, 3], **loads},
    )


# --- the planning engine's snapshots -----------------------------------------------------

MiB = 1024 * 1024
RESOURCES = ("network_in", "network_out", "disk")


def broker(bid: int, rack: str | None = None, alive: bool = True, **capacity: float) -> dict:
    b: dict = {"id": bid, "rack": rack, "alive": alive}
    if capacity:
        b["capacity"] = capacity
    return b


def part(
    topic: str,
    n: int,
    replicas: list[int],
    *,
    bytes_in: float = 0.0,
    bytes_out: float = 0.0,
    size: float = 0.0,
    leader: int | None = None,
) -> dict:
    return {
        "topic": topic,
        "partition": n,
        "replicas": list(replicas),
        "leader": replicas[0] if leader is None else leader,
        "load": {"bytes_in": bytes_in, "bytes_out": bytes_out, "messages_in": 0.0, "size": size},
    }


def snapshot(brokers: list[dict], partitions: list[dict]) -> dict:
    return {
        "cluster": "test",
        "taken_at": "2026-11-22T04:00:00Z",
        "brokers": brokers,
        "partitions": partitions,
    }


def apply_plan(snap: dict, plan: dict) -> dict:
    """The snapshot as it would be once the plan is executed (leader = replicas[0])."""
    new = {(e["topic"], e["partition"]): e["replicas"] for e in plan["partitions"]}
    parts = []
    for p in snap["partitions"]:
        reps = new.get((p["topic"], p["partition"]), p["replicas"])
        parts.append({**p, "replicas": list(reps), "leader": reps[0]})
    return {**snap, "partitions": parts}


def assignment(snap: dict) -> dict[tuple[str, int], list[int]]:
    return {(p["topic"], p["partition"]): list(p["replicas"]) for p in snap["partitions"]}


def broker_loads(snap: dict) -> dict[int, dict[str, float]]:
    """Per broker: network_in, network_out, disk, replicas, leaders (leader = replicas[0])."""
    out: dict[int, dict[str, float]] = {b["id"]: defaultdict(float) for b in snap["brokers"]}
    for p in snap["partitions"]:
        load = p.get("load") or {}
        bi = float(load.get("bytes_in", 0.0))
        bo = float(load.get("bytes_out", 0.0))
        sz = float(load.get("size", 0.0))
        reps = p["replicas"]
        for r in reps:
            out[r]["network_in"] += bi
            out[r]["disk"] += sz
            out[r]["replicas"] += 1
        lead = out[reps[0]]
        lead["network_out"] += bo + bi * (len(reps) - 1)
        lead["leaders"] += 1
    return out


def usable_ids(snap: dict, removed: tuple[int, ...] = ()) -> list[int]:
    return [b["id"] for b in snap["brokers"] if b.get("alive", True) and b["id"] not in removed]


def racks_of(snap: dict) -> dict[int, str]:
    # a broker without rack is a rack of its own
    return {
        b["id"]: b["rack"] if b.get("rack") is not None else f"__{b['id']}" for b in snap["brokers"]
    }


def rack_violation(snap: dict, replicas: list[int], removed: tuple[int, ...] = ()) -> int:
    racks = racks_of(snap)
    n_racks = len({racks[b] for b in usable_ids(snap, removed)}) or 1
    rf = len(replicas)
    m = 1 if n_racks >= rf else math.ceil(rf / n_racks)
    count: dict[str, int] = defaultdict(int)
    for r in replicas:
        count[racks[r]] += 1
    return sum(max(0, c - m) for c in count.values())


def ratio(snap: dict, resource: str, removed: tuple[int, ...] = ()) -> float:
    """max utilisation / ideal over usable brokers (raw load when no capacity)."""
    loads = broker_loads(snap)
    caps = {b["id"]: (b.get("capacity") or {}).get(resource) for b in snap["brokers"]}
    ids = usable_ids(snap, removed)
    use_cap = resource in RESOURCES and all(caps[b] for b in ids)
    c = {b: caps[b] if use_cap else 1.0 for b in ids}
    total = sum(loads[b][resource] for b in ids)
    if total == 0:
        return 1.0
    ideal = total / sum(c.values())
    return max(loads[b][resource] / c[b] for b in ids) / ideal


def overloaded_snapshot() -> dict:
    """A cluster no plan can fully balance: 270 units of network in over 3 x 100 (90 %,
    above the 80 % capacity limit); dead broker 4's replica of `big-0` fits on no alive
    broker under the disk limit; `lost-0` has its only replica on broker 4."""
    cap = {"network_in": 100.0, "disk": 100.0}
    return snapshot(
        [broker(b, **cap) for b in (1, 2, 3)] + [broker(4, alive=False, **cap)],
        [part("t", i, [1], bytes_in=10.0) for i in range(15)]
        + [part("t", 15 + i, [2 + i % 2], bytes_in=10.0) for i in range(12)]
        + [part("big", 0, [1, 4], size=90.0), part("lost", 0, [4], size=1.0)],
    )


def user_granted(name: str, role: Role, cluster: Cluster | None) -> User:
    """A new user holding `role` on `cluster` (None: on every cluster), and nothing else."""
    user = User.objects.create_user(name)
    Grant.objects.create(role=role, user=user, cluster=cluster)
    return user
