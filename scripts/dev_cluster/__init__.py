"""Local real Apache Kafka (KRaft) dev cluster + Redis, for `make run` and the tests.

Layout: KRaft controllers (node 100, or 100-102 with `up --controllers 3`) and three
brokers (nodes 1, 2, 3, racks a/b/c), each a plain `java ... kafka.Kafka node.properties`
process started from the jars that `scripts/fetch-kafka-jars` puts in `.cache/kafka/libs`.
Everything a node writes lives in `<run_dir>/<node id>/` (config, data, pid, log); run_dir
defaults to `.run/kafka`.

Only the standard library and the Kafka client libraries (imported lazily, for metadata
checks) are used, so `down` still works from a bare python3.

This module only re-exports the public names; each concept has a module of its own:
cluster (lifecycle, state), options (what a run dir was started with), companions
(clusters of another shape beside the default one), versions (the Kafka lines: 4.3,
3.9), topology, node_config, listeners
(profiles: the extension point for security), jvm, jars, storage, launcher, processes,
metadata, redis_server, leases, locking, errors, paths, secure (+ secure_pki,
secure_acls: the `--secure` profile), cli (`scripts/dev-cluster`, or
`python -m dev_cluster`).
"""

from .cli import main
from .cluster import UP_TIMEOUT_S, DevCluster, NodeStatus
from .companions import jbod_cluster_args, kafka39_cluster_args, quorum_cluster_args
from .errors import DevClusterError, UnknownNodeError
from .listeners import PROFILES, ListenerProfile, PlaintextProfile
from .redis_server import RedisStatus
from .secure import SecureDevCluster, secure_cluster_args
from .topology import CONTROLLER_ID, NodeSpec

__all__ = [
    "CONTROLLER_ID",
    "PROFILES",
    "UP_TIMEOUT_S",
    "DevCluster",
    "DevClusterError",
    "ListenerProfile",
    "NodeSpec",
    "NodeStatus",
    "PlaintextProfile",
    "RedisStatus",
    "SecureDevCluster",
    "UnknownNodeError",
    "jbod_cluster_args",
    "kafka39_cluster_args",
    "main",
    "quorum_cluster_args",
    "secure_cluster_args",
]
