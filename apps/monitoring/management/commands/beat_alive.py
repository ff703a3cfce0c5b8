"""Exit 0 when beat's heartbeat ran within three intervals, else 1 (beat's healthcheck)."""

from django.core.management.base import BaseCommand, CommandError

from apps.monitoring.heartbeat import beat_heartbeat_problem


class Command(BaseCommand):
    help = "Exit 1 unless beat's heartbeat ran within 3 x MONITORING_HEARTBEAT_INTERVAL."

    def handle(self, *args, **options) -> None:
        problem = beat_heartbeat_problem()
        if problem:
            raise CommandError(problem)
        self.stdout.write("beat heartbeat fresh")
