"""Restarting a SIGKILLed dev-cluster broker reliably.

While a broker is dead, clients keep connecting to its port, and one of them may be
given that very port as its own ephemeral port: a TCP self-connection, which then sits
in TIME_WAIT for a minute. The broker can't bind until it is gone, and it fails only
after it registered with the controller, so `DevCluster.start_broker` (which waits for
the registration) may return for a broker that exits a moment later. Hence: wait until
the port is free, start, and check the broker is listening and stays up; else again.
"""

import socket

from dev_cluster import DevCluster, DevClusterError
from devkit.polling import wait_until


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _listening(port: int) -> bool:
    """From /proc, not by connecting: a connect to a port nobody listens on is what
    makes the self-connections in the first place."""
    hex_port = f":{port:04X}"
    with open("/proc/net/tcp") as table:
        return any(
            cols[1].endswith(hex_port) and cols[3] == "0A"  # 0A: LISTEN
            for cols in (line.split() for line in table.readlines()[1:])
        )


def broker_restart(cluster: DevCluster, broker: int, timeout: float = 150) -> None:
    port = cluster.nodes[broker].port

    def started() -> bool:
        if cluster.node_pid(broker) is None:
            if not _bindable(port):
                return False
            try:
                cluster.start_broker(broker)
            except DevClusterError:
                return False
        try:
            wait_until(lambda: _listening(port), 20, 0.2, what=f"broker {broker} listening")
        except AssertionError:
            return False
        return cluster.node_pid(broker) is not None

    wait_until(started, timeout, 2, what=f"broker {broker} restarted")
