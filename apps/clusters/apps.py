from django.apps import AppConfig


class ClustersConfig(AppConfig):
    name = "apps.clusters"
    label = "clusters"
    verbose_name = "Kafka clusters"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the system check)
