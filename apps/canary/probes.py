"""The canary probes of this worker process, one per cluster, kept between rounds.

A probe is rebuilt when the cluster's connection settings change. Rounds of one cluster
never overlap (its round lease), so a probe is used by one thread at a time.
"""

import threading

from apps.clusters.models import Cluster
from apps.kafka_layer.canary import CanaryProbe

_lock = threading.Lock()
_probes: dict[int, tuple[object, CanaryProbe]] = {}


def canary_probe_for(*, cluster: Cluster, topic: str) -> CanaryProbe:
    connection = cluster.connection
    key = (connection, topic)
    with _lock:
        held = _probes.get(cluster.pk)
        if held is not None and held[0] == key:
            return held[1]
        if held is not None:
            held[1].close()
        probe = CanaryProbe(connection=connection, topic=topic)
        _probes[cluster.pk] = (key, probe)
        return probe


def canary_probe_drop(*, cluster: Cluster) -> None:
    """Forget the cluster's probe (after a failure: the next round starts afresh)."""
    with _lock:
        held = _probes.pop(cluster.pk, None)
    if held is not None:
        held[1].close()
