"""Companion clusters for tests that need another shape beside the default dev cluster.

Each gets its own run dir next to the default one and its own ports (an offset added to
the default broker base and controller port), so it can run alongside the default
cluster without touching it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .paths import DEFAULT_RUN_DIR
from .topology import DEFAULT_BROKER_PORT_BASE, DEFAULT_CONTROLLER_PORT

QUORUM_PORT_OFFSET = 10


def _companion_args(suffix: str, port_offset: int) -> dict[str, Any]:
    env = os.environ
    run_dir = Path(env.get("KAFKA_DEV_DIR") or DEFAULT_RUN_DIR).resolve()
    base = int(env.get("KAFKA_DEV_BROKER_PORT_BASE", DEFAULT_BROKER_PORT_BASE))
    controller = int(env.get("KAFKA_DEV_CONTROLLER_PORT", DEFAULT_CONTROLLER_PORT))
    return {
        "run_dir": run_dir.with_name(f"{run_dir.name}-{suffix}"),
        "broker_port_base": base + port_offset,
        "controller_port": controller + port_offset,
    }


def quorum_cluster_args() -> dict[str, Any]:
    """DevCluster(**these): three controllers, run dir `<run dir>-quorum`, ports + 10."""
    return {**_companion_args("quorum", QUORUM_PORT_OFFSET), "controllers": 3}


KAFKA39_PORT_OFFSET = 20


def kafka39_cluster_args() -> dict[str, Any]:
    """DevCluster(**these): Kafka 3.9.x, run dir `<run dir>-3.9`, ports + 20."""
    return {**_companion_args("3.9", KAFKA39_PORT_OFFSET), "kafka_version": "3.9"}


JBOD_PORT_OFFSET = 30


def jbod_cluster_args() -> dict[str, Any]:
    """DevCluster(**these): two log dirs per broker (JBOD), run dir `<run dir>-jbod`,
    ports + 30."""
    return {**_companion_args("jbod", JBOD_PORT_OFFSET), "log_dirs": 2}
