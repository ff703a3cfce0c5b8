"""kafka-python's connection errors, one warning per state change.

Every kafka-python admin client (one per reassignment or log-dir request) tries the
bootstrap servers and the brokers its metadata names; with one broker dead, each
request logs three or four ERROR/WARNING lines about it (connection failed, lost,
bootstrap not ready...), several times a second while a plan runs. This filter lets
the first failure to reach a node through as one WARNING and mutes the repeats until
that node has been quiet for QUIET_SECONDS (it connected again, or nobody asked), so a
broker that dies, comes back and dies again is reported each time.
"""

import logging
import re
import threading
import time

QUIET_SECONDS = 60.0
LOGGERS = ("kafka.net.manager", "kafka.net.connection", "kafka.net.transport")

# The lines that say the same thing again: always muted.
_ECHOES = ("Connection failed: ", "not ready; waiting")
_NODE = re.compile(r"node_id=(\S+)|Bootstrap connection to (\S+) failed")


class ConnectionNoiseFilter(logging.Filter):
    def __init__(self, clock=time.monotonic) -> None:
        super().__init__()
        self._clock = clock
        self._last_failure: dict[str, float] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        message = record.getMessage()
        if any(echo in message for echo in _ECHOES):
            return False
        match = _NODE.search(message)
        if match is None:
            return True  # not about a connection: leave it alone
        node = match.group(1) or match.group(2)
        now = self._clock()
        with self._lock:
            last = self._last_failure.get(node)
            self._last_failure[node] = now
        if last is not None and now - last < QUIET_SECONDS:
            return False
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.msg = "%s (repeats muted while it keeps failing)"
        record.args = (message,)
        return True


def connection_noise_mute() -> None:
    """Install the filter on kafka-python's connection loggers (once per process)."""
    loggers = [logging.getLogger(name) for name in LOGGERS]
    if any(isinstance(f, ConnectionNoiseFilter) for lg in loggers for f in lg.filters):
        return
    shared = ConnectionNoiseFilter()  # one state: each logger reports the same failure
    for logger in loggers:
        logger.addFilter(shared)
