from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "apps.dashboard"
    label = "dashboard"
    verbose_name = "Operator dashboard"

    def ready(self) -> None:
        # Plan changes audited by the lifecycle and the executor are pushed live.
        from . import signals  # noqa: F401
