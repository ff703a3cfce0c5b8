"""Which nodes the dev cluster has and where each listens: ids, roles, ports, racks."""

from __future__ import annotations

from dataclasses import dataclass

HOST = "127.0.0.1"
CONTROLLER_ID = 100  # the first controller; controller i (0-based) is node 100 + i
BROKER_RACKS: dict[int, str] = {1: "a", 2: "b", 3: "c"}
DEFAULT_BROKER_PORT_BASE = 29090  # broker N listens on base + N
DEFAULT_CONTROLLER_PORT = 29190  # controller 100 + i listens on this + i


@dataclass(frozen=True)
class NodeSpec:
    node_id: int
    role: str  # "controller" or "broker"
    port: int
    rack: str | None


def topology_nodes(
    *, broker_port_base: int, controller_port: int, controllers: int = 1
) -> dict[int, NodeSpec]:
    """The nodes by id: the controllers (the KRaft quorum's voters) first, then the brokers."""
    nodes = {
        CONTROLLER_ID + i: NodeSpec(CONTROLLER_ID + i, "controller", controller_port + i, None)
        for i in range(controllers)
    }
    for broker_id, rack in BROKER_RACKS.items():
        nodes[broker_id] = NodeSpec(broker_id, "broker", broker_port_base + broker_id, rack)
    return nodes
