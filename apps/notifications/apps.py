from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "apps.notifications"
    label = "notifications"
    verbose_name = "Notifications"

    def ready(self) -> None:
        # Events come from the audit trail and from the clusters app's domain signals.
        # The tasks are looked up by name (queue.py), so they must be registered here.
        from . import receivers, tasks  # noqa: F401
