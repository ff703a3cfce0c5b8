from django.apps import AppConfig


class MetricsConfig(AppConfig):
    name = "apps.metrics"
    label = "metrics"
    verbose_name = "Traffic metrics"

    def ready(self) -> None:
        # The aggregation worker warms its Spark session as it starts.
        from . import worker_start  # noqa: F401
