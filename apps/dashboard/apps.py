from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "apps.dashboard"
    label = "dashboard"
    verbose_name = "Operator dashboard"

    def ready(self) -> None:
        # Domain signals and audited plan changes are pushed to the live pages.
        from . import signals  # noqa: F401
