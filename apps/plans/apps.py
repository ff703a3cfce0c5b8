from django.apps import AppConfig


class PlansConfig(AppConfig):
    name = "apps.plans"
    label = "plans"
    verbose_name = "Reassignment plans"

    def ready(self) -> None:
        # A restarted worker picks up executions a killed one left behind.
        from . import receivers  # noqa: F401
