"""A synthetic cluster of any size, as a sync and an aggregation would see it: shared by
bench/bench_control_plane.py and the browser tests of a big cluster. No Kafka."""

from __future__ import annotations

import random
from types import SimpleNamespace

RACKS = 6
RF = 3


def topology_generate(*, brokers: int, topics: int, partitions: int, seed: int = 42):
    """Topics with heavy-tailed partition counts (each >= 1), rack-aware RF 3 replicas."""
    rng = random.Random(seed)
    weights = [1.0 / (i + 1) ** 0.9 for i in range(topics)]
    scale = (partitions - topics) / sum(weights)
    counts = [1 + int(w * scale) for w in weights]
    counts[0] += partitions - sum(counts)
    by_rack: dict[int, list[int]] = {}
    for b in range(1, brokers + 1):
        by_rack.setdefault(b % RACKS, []).append(b)
    racks = list(by_rack)
    out = []
    for t, count in enumerate(counts):
        parts = []
        for i in range(count):
            chosen = rng.sample(racks, RF)
            replicas = [rng.choice(by_rack[r]) for r in chosen]
            parts.append((i, replicas))
        out.append((f"topic-{t:05d}", parts))
    return out


def state_make(topology, *, brokers: int, moved: float = 0.0, seed: int = 7):
    """A ClusterState as a sync would read it; `moved` is the share of leaders moved."""
    from apps.kafka_layer.cluster_state import BrokerState, ClusterState, PartitionState, TopicState

    rng = random.Random(seed)
    topic_states = []
    for name, parts in topology:
        ps = []
        for index, replicas in parts:
            leader = replicas[0]
            if moved and rng.random() < moved:
                leader = replicas[1]
            ps.append(PartitionState(index=index, leader=leader, replicas=replicas, isr=replicas))
        topic_states.append(TopicState(name=name, internal=False, partitions=ps))
    return ClusterState(
        cluster_id="bench",
        controller_id=1,
        brokers=[
            BrokerState(node_id=b, host="127.0.0.1", port=9000 + b, rack=f"r{b % RACKS}")
            for b in range(1, brokers + 1)
        ],
        topics=topic_states,
    )


def window_make(topology, *, window_start_ms: int, window_ms: int = 60_000, seed: int = 11):
    """One aggregation result: a load per partition and per broker (BALANCING.md §3)."""
    rng = random.Random(seed)
    loads, per_broker = [], {}
    for name, parts in topology:
        rate = rng.lognormvariate(6, 2)
        for index, replicas in parts:
            bytes_in = rate * rng.uniform(0.5, 1.5) * 500
            size = int(bytes_in * 3600 * rng.uniform(1, 48))
            loads.append(
                {
                    "topic": name,
                    "partition": index,
                    "window_start": window_start_ms,
                    "window_end": window_start_ms + window_ms,
                    "samples": 6,
                    "leader": replicas[0],
                    "replicas": replicas,
                    "messages_in": bytes_in / 500,
                    "bytes_in": bytes_in,
                    "bytes_out": bytes_in * 2,
                    "size": size,
                    "avg_record_size": 500.0,
                    "consumer_groups": 2,
                }
            )
            for k, b in enumerate(replicas):
                acc = per_broker.setdefault(
                    b, {"in": 0.0, "out": 0.0, "disk": 0, "replicas": 0, "leaders": 0}
                )
                acc["in"] += bytes_in
                acc["disk"] += size
                acc["replicas"] += 1
                if k == 0:
                    acc["out"] += bytes_in * 2 + bytes_in * (len(replicas) - 1)
                    acc["leaders"] += 1
    broker_loads = [
        {
            "broker": b,
            "window_start": window_start_ms,
            "window_end": window_start_ms + window_ms,
            "network_in": a["in"],
            "network_out": a["out"],
            "disk": a["disk"],
            "replicas": a["replicas"],
            "leaders": a["leaders"],
        }
        for b, a in sorted(per_broker.items())
    ]
    return SimpleNamespace(
        partition_loads=loads,
        broker_loads=broker_loads,
        next_offsets={0: 1},
        finalized_until_ms=window_start_ms + window_ms,
        input_rows=len(loads) * 6,
        malformed_rows=0,
        late_rows=0,
    )
