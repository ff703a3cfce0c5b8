"""Exit 0 when beat's heartbeat ran within three intervals, else 1 (beat's healthcheck)."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.monitoring.heartbeat import beat_heartbeat_age


class Command(BaseCommand):
    help = "Exit 1 unless beat's heartbeat ran within 3 x MONITORING_HEARTBEAT_INTERVAL."

    def handle(self, *args, **options) -> None:
        limit = 3 * settings.MONITORING_HEARTBEAT_INTERVAL
        age = beat_heartbeat_age()
        if age is None or age > limit:
            seen = "never" if age is None else f"{age:.0f} s ago"
            raise CommandError(f"no beat heartbeat within {limit:.0f} s (last {seen})")
        self.stdout.write(f"beat heartbeat {age:.0f} s ago")
