"""Listener profiles: how nodes listen and authenticate (the extension point for security).

A profile decides each node's listener properties and may prepare files (certificates)
before nodes are configured and add arguments to storage formatting (SCRAM users). The
plaintext profile is the default; another profile is a module of its own that registers
itself in PROFILES (e.g. `PROFILES["secure"] = SecureProfile()`), and `DevCluster(profile=...)`
picks it by name. The PLAINTEXT listener on broker_port_base + N must stay, since
`bootstrap_servers` and the tests use it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from .topology import HOST, NodeSpec


class ListenerProfile(Protocol):
    name: str

    def prepare(self, run_dir: Path) -> None:
        """Create whatever the profile needs on disk before any node is configured."""

    def node_props(self, spec: NodeSpec, run_dir: Path) -> dict[str, str]:
        """Listener properties of one node (listeners, protocol map, inter-broker listener)."""
        ...

    def format_args(self, run_dir: Path) -> list[str]:
        """Extra `kafka-storage format` arguments (e.g. `--add-scram ...`)."""
        ...


class PlaintextProfile:
    """One PLAINTEXT listener per broker, PLAINTEXT between controller and brokers."""

    name = "plaintext"

    def prepare(self, run_dir: Path) -> None:
        return None

    def node_props(self, spec: NodeSpec, run_dir: Path) -> dict[str, str]:
        props = {
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        }
        if spec.role == "controller":
            props["listeners"] = f"CONTROLLER://{HOST}:{spec.port}"
        else:
            props["inter.broker.listener.name"] = "PLAINTEXT"
            props["listeners"] = f"PLAINTEXT://{HOST}:{spec.port}"
            props["advertised.listeners"] = f"PLAINTEXT://{HOST}:{spec.port}"
        return props

    def format_args(self, run_dir: Path) -> list[str]:
        return []


DEFAULT_PROFILE = PlaintextProfile.name
PROFILES: dict[str, ListenerProfile] = {PlaintextProfile.name: PlaintextProfile()}
