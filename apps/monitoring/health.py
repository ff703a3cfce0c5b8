"""The health checks of this product's own processes, beside django-health-check's
database and Redis ones: beat's heartbeat, each cluster's last sync."""

import dataclasses
import datetime

from django.conf import settings
from django.utils import timezone
from health_check.base import HealthCheck
from health_check.exceptions import ServiceUnavailable

from .heartbeat import beat_heartbeat_problem


@dataclasses.dataclass
class BeatHeartbeat(HealthCheck):
    """Beat sent its heartbeat entry and a worker ran it within three intervals."""

    timeout = datetime.timedelta(seconds=3)

    def run(self) -> None:
        try:
            problem = beat_heartbeat_problem()
        except Exception as exc:  # redis-py raises its own types
            raise ServiceUnavailable("Redis unreachable") from exc
        if problem:
            raise ServiceUnavailable(problem)


@dataclasses.dataclass
class ClusterSynced(HealthCheck):
    """A cluster synced within MONITORING_SYNC_AGE_MAX seconds."""

    cluster: str
    synced_at: datetime.datetime | None = dataclasses.field(repr=False, default=None)

    def run(self) -> None:
        if self.synced_at is None:
            raise ServiceUnavailable("never synced")
        age = (timezone.now() - self.synced_at).total_seconds()
        if age > settings.MONITORING_SYNC_AGE_MAX:
            raise ServiceUnavailable(f"last synced {age:.0f} s ago")
