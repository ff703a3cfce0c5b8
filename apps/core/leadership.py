"""Leadership among processes of one kind (e.g. beats): one Redis key held for `ttl`
seconds by the leader, renewed while it lives; when the leader dies the key expires
and the next process to ask takes it."""

from __future__ import annotations

import logging
import socket
import time
import uuid

import redis
from redis.lock import Lock

logger = logging.getLogger(__name__)


class Leadership:
    def __init__(self, *, redis_url: str, name: str, ttl: float) -> None:
        self.name = name
        self.ttl = ttl
        self._client = redis.Redis.from_url(
            redis_url, socket_timeout=min(5.0, ttl / 3), socket_connect_timeout=min(5.0, ttl / 3)
        )
        self._lock = Lock(self._client, name, timeout=ttl, thread_local=False)
        # Says who holds it, to whoever reads the key.
        self._token = f"{socket.gethostname()}:{uuid.uuid4().hex[:8]}"
        self._held = False
        self._checked = float("-inf")

    @property
    def retry_after(self) -> float:
        """How soon a follower asks again: well within one ttl."""
        return max(0.5, self.ttl / 4)

    def held(self) -> bool:
        """True while this process leads: renews the key at most once a second. A
        leader that can't renew (Redis unreachable, or the key expired and another took
        it) stops leading at once rather than risk two."""
        now = time.monotonic()
        if now - self._checked < 1.0:
            return self._held
        self._checked = now
        was = self._held
        try:
            if was:
                self._lock.reacquire()
            else:
                self._held = bool(self._lock.acquire(blocking=False, token=self._token))
        except redis.exceptions.LockNotOwnedError:
            self._held = False
        except redis.RedisError as exc:
            if was:
                logger.warning("%s: leadership unknown (%s): not leading", self.name, exc)
            self._held = False
        if self._held != was:
            logger.warning("%s: %s", self.name, "this process leads" if self._held else "lost")
        return self._held

    def release(self) -> None:
        """Let go (a clean stop): the next process takes over at once."""
        if self._held:
            try:
                self._lock.release()
            except redis.RedisError:
                pass  # expired or gone: nothing to let go of
            self._held = False
