from django.apps import AppConfig


class AccessConfig(AppConfig):
    name = "apps.access"
    label = "access"
    verbose_name = "Access: per-cluster roles"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the system check)
