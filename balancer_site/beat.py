"""Beat's scheduler: django-celery-beat's, sending only while this beat leads (a Redis
key, `apps.core.leadership`). Run two beats: each entry is sent once, and when the
leader dies the other takes over within BEAT_LEADER_LOCK_SECONDS."""

from django.conf import settings
from django_celery_beat.schedulers import DatabaseScheduler

from apps.core.leadership import Leadership


class LeaderDatabaseScheduler(DatabaseScheduler):
    def __init__(self, *args, **kwargs) -> None:
        self.leadership = Leadership(
            redis_url=settings.REDIS_URL,
            name="balancer:beat-leader",
            ttl=settings.BEAT_LEADER_LOCK_SECONDS,
        )
        super().__init__(*args, **kwargs)

    def tick(self, *args, **kwargs) -> float:
        # Leader and followers alike come back within a quarter of the lock: the leader
        # to renew it long before it expires, a follower to take it soon after.
        if not self.leadership.held():
            return min(self.max_interval, self.leadership.retry_after)
        return min(super().tick(*args, **kwargs), self.leadership.retry_after)

    def close(self) -> None:
        super().close()
        self.leadership.release()
