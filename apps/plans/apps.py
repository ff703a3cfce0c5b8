from django.apps import AppConfig


class PlansConfig(AppConfig):
    name = "apps.plans"
    label = "plans"
    verbose_name = "Reassignment plans"

    def ready(self) -> None:
        # The tasks: registered in every process, so queue.py finds them by name.
        # The receivers: a restarted worker picks up executions a killed one left behind.
        from . import receivers, tasks  # noqa: F401
