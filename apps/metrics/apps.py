from django.apps import AppConfig


class MetricsConfig(AppConfig):
    name = "apps.metrics"
    label = "metrics"
    verbose_name = "Traffic metrics"
