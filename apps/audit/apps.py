from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "apps.audit"
    label = "audit"
    verbose_name = "Audit trail"

    def ready(self) -> None:
        # Sign-in and failed sign-in events come from django.contrib.auth signals.
        from . import signals  # noqa: F401
