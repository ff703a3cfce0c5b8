"""Beat's heartbeat: a beat entry runs `beat_heartbeat_record` on a worker every
MONITORING_HEARTBEAT_INTERVAL seconds, which stamps the time in Redis. A fresh stamp
says both that beat sends and that a worker of the default queue runs what it sends."""

import time

import redis
from django.conf import settings

KEY = "balancer:beat-heartbeat"


def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)


def beat_heartbeat_record() -> None:
    # Kept for ten intervals: a stamp gone means beat has been away that long at least.
    ttl = max(60, int(settings.MONITORING_HEARTBEAT_INTERVAL * 10))
    _client().set(KEY, repr(time.time()), ex=ttl)


def beat_heartbeat_age() -> float | None:
    """Seconds since the last heartbeat; None when there is none."""
    stamp = _client().get(KEY)
    return None if stamp is None else max(0.0, time.time() - float(stamp))


def beat_heartbeat_problem() -> str | None:
    """What is wrong with beat's heartbeat ("no beat heartbeat within 45 s (last …)"),
    None while one ran within three intervals."""
    limit = 3 * settings.MONITORING_HEARTBEAT_INTERVAL
    age = beat_heartbeat_age()
    if age is not None and age <= limit:
        return None
    seen = "never" if age is None else f"{age:.0f} s ago"
    return f"no beat heartbeat within {limit:.0f} s (last {seen})"
